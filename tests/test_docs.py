"""The documents stay true to the tree: the README's layout names every package and module
of spmdc/ and nothing that does not exist; every path docs/ARCHITECTURE.md names exists,
except those it marks as planned (a list that may be empty), which must not exist yet;
the Notes it cites are defined; every SPMDC_* variable is documented; and the links
between the documents resolve, anchors included."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from spmdc.env import VARIABLES

REPO = Path(__file__).resolve().parent.parent
SPMDC = REPO / "spmdc"
README = REPO / "README.md"
ARCHITECTURE = REPO / "docs" / "ARCHITECTURE.md"
DOCUMENTS = [README, *sorted((REPO / "docs").glob("*.md"))]

# The floors of spmdc/ (and the repository's top folders) that a bare path may start
# with: `lax/special.py` in the architecture document means spmdc/lax/special.py.
FLOORS = {"compiler", "runtime", "core", "transforms", "lax", "numpy", "random", "nn",
          "scipy", "example_libraries", "experimental"}
TOP = {"spmdc", "docs", "tests", "tools", "examples"}


def _between(text: str, start: str, end: str) -> str:
    """The text between the marker comments ``<!-- start ...-->`` and ``<!-- end -->``."""
    opening = re.search(rf"<!-- {re.escape(start)}\b.*?-->", text)
    assert opening, f"no <!-- {start} ... --> marker"
    closing = text.find(f"<!-- {end} -->", opening.end())
    assert closing > 0, f"no <!-- {end} --> marker after <!-- {start} -->"
    return text[opening.end():closing]


def _paths(text: str) -> set[str]:
    """Every path in backquotes, made relative to the repository: `spmdc/...`, `docs/...`,
    `tests/...`, `tools/...`, `examples/...` as written, and `lax/...`-style paths under
    spmdc/. Templates (`<family>`), globs and dotted module names are not paths."""
    out = set()
    for token in re.findall(r"`([^`\s]+)`", text):
        head = token.split("/", 1)[0]
        if "/" not in token or any(c in token for c in "<>*{}()[],:"):
            continue
        if head in TOP:
            out.add(token)
        elif head in FLOORS:
            out.add(f"spmdc/{token}")
    return out


def _exists(path: str) -> bool:
    target = REPO / path
    return target.is_dir() if path.endswith("/") else target.exists()


def _layout() -> str:
    return _between(README.read_text(), "layout", "/layout")


def test_the_layout_names_every_package_and_module():
    named = _paths(_layout())
    entries = [f"spmdc/{p.name}/" for p in SPMDC.iterdir()
               if p.is_dir() and (p / "__init__.py").exists()]
    entries += [f"spmdc/{p.name}" for p in SPMDC.glob("*.py")]
    missing = sorted(e for e in entries
                     if not e.split("/")[1].startswith("_") and e not in named)
    assert not missing, f"README.md's layout does not name {missing}"


def test_every_path_the_layout_names_exists():
    named = _paths(_layout())
    assert "spmdc/compiler/" in named, "the layout's paths were not found"
    absent = sorted(p for p in named if not _exists(p))
    assert not absent, f"README.md's layout names {absent}, which do not exist"


def _planned() -> set[str]:
    return _paths(_between(ARCHITECTURE.read_text(), "planned", "/planned"))


def test_every_path_the_architecture_names_exists_unless_planned():
    planned = _planned()
    named = _paths(ARCHITECTURE.read_text())
    assert "spmdc/compiler/ir.py" in named, "the document's paths were not found"
    absent = sorted(p for p in named - planned if not _exists(p))
    assert not absent, f"docs/ARCHITECTURE.md names {absent}, which do not exist " \
        "(mark them in its planned list if they are yet to come)"


def test_what_the_architecture_marks_as_planned_does_not_exist_yet():
    planned = _planned()                  # the list may be empty, its markers may not
    landed = sorted(p for p in planned if _exists(p))
    assert not landed, f"{landed} exist now: drop their *(planned)* marks and their " \
        "lines in docs/ARCHITECTURE.md's planned list"


def test_the_notes_the_architecture_cites_are_defined():
    defined = set()
    for path in SPMDC.rglob("*.py"):
        defined |= set(re.findall(r"Note \[([^\]]+)\]\n\s*#?\s*~~~", path.read_text()))
    cited = {" ".join(name.split())         # a name may be wrapped over two lines
             for name in re.findall(r"Note\s+\[([^\]]+)\]", ARCHITECTURE.read_text())}
    assert "collective transpose" in cited
    assert not cited - defined, f"no Note defines {sorted(cited - defined)}"


def test_every_environment_variable_is_documented():
    text = (REPO / "docs" / "configuration.md").read_text()
    assert not [v for v in VARIABLES if f"`{v}" not in text]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    return {_slug(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_links_between_the_documents_resolve(document: Path):
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", document.read_text()):
        if re.match(r"[a-z]+:", target):
            continue                      # an external address
        file, _, anchor = target.partition("#")
        path = (document.parent / file).resolve() if file else document
        if not path.exists():
            broken.append(target)
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(target)
    assert not broken, f"{document.name} links to {broken}, which do not resolve"
