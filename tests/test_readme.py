"""The README's walkthrough runs, and its IR listing is what make_ir prints."""
import os
import re

README = os.path.join(os.path.dirname(__file__), os.pardir, "README.md")


def _section() -> str:
    text = open(README).read()
    return text.split("## A walkthrough", 1)[1].split("\n## ", 1)[0]


def test_walkthrough_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", _section(), re.S)
    assert blocks, "the walkthrough has no Python blocks"
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
    printed = capsys.readouterr().out
    listing = re.findall(r"```\n(func @.*?)```", _section(), re.S)
    assert listing and listing[0].strip() in printed
