"""The README's walkthrough and shard_map sections run, and the walkthrough's IR listing
is what make_ir prints."""
import os
import re

import pytest

README = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "README.md")


def _section(title: str = "A walkthrough") -> str:
    text = open(README).read()
    return text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_walkthrough_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", _section(), re.S)
    assert blocks, "the walkthrough has no Python blocks"
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
    printed = capsys.readouterr().out
    listing = re.findall(r"```\n(func @.*?)```", _section(), re.S)
    assert listing and listing[0].strip() in printed


@pytest.mark.devices(8)
def test_shard_map_section_runs():
    blocks = re.findall(r"```python\n(.*?)```", _section("SPMD over a mesh"), re.S)
    assert blocks, "the shard_map section has no Python blocks"
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)
