"""The documentation stays true to the code:
- docs/api-reference.md is exactly what `python docs/gen_api.py` writes from the
  docstrings now (so it never goes stale), and its own #anchors resolve;
- every public name of `hal` (hal.__all__) has a docstring of its own;
- relative links in README.md and docs/**/*.md point to files that exist;
- tests cited in the docs (`tests/x.py::test_name`, then `::test_other` for the same
  file) exist, so docs/fidelity.md's claims keep pointing at what checks them.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import importlib.util
import inspect
import pathlib
import re

import pytest

import hal

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
REGENERATE = "python docs/gen_api.py"


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_api", DOCS / "gen_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen_api = _load_generator()


def test_api_reference_is_current():
    expected = gen_api.render()
    path = DOCS / "api-reference.md"
    current = path.read_text() if path.exists() else ""
    if current != expected:
        diff = list(difflib.unified_diff(current.splitlines(), expected.splitlines(), "committed", "regenerated",
                                         n=1, lineterm=""))
        shown = "\n".join(diff[:60]) + ("\n..." if len(diff) > 60 else "")
        pytest.fail(f"docs/api-reference.md is stale; regenerate it with `{REGENERATE}`\n{shown}")


def test_api_reference_rendering_is_deterministic():
    assert gen_api.render() == gen_api.render()
    assert not re.search(r" at 0x[0-9a-fA-F]+", gen_api.render()), "a default value rendered with its address"


def test_api_reference_anchors_resolve():
    text = (DOCS / "api-reference.md").read_text()
    headings = {gen_api.anchor(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}
    links = set(re.findall(r"\]\((#[^)]+)\)", text))
    assert links and not links - headings, f"links to missing headings: {sorted(links - headings)}"


def _own_docstring(obj) -> str:
    return gen_api.own_docstring(obj)


def test_every_public_name_in_hal_has_a_docstring():
    missing = []
    for name in hal.__all__:
        obj = getattr(hal, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj) or inspect.ismodule(obj)):
            continue  # constants (DRAM_MEMORY_CONFIG, ...) are instances: their class carries the docstring
        if not _own_docstring(obj):
            missing.append(name)
    assert not missing, f"hal.__all__ names without a docstring of their own: {', '.join(missing)}"


def test_own_docstring_ignores_inherited_and_generated_ones():
    class Flags(enum.IntFlag):
        A = 1

    class Child(hal.HalError):
        pass

    @dataclasses.dataclass
    class Plain:
        x: int

    assert _own_docstring(Flags) == "" and _own_docstring(Child) == ""  # not IntFlag's, not HalError's
    assert _own_docstring(Plain) == ""  # not the "Plain(x: int)" dataclasses writes
    assert _own_docstring(hal.BindingRef)  # a dataclass with a real docstring


# Markdown links [text](target) and images ![alt](target), outside code.
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_CODE_SPAN = re.compile(r"(`+).+?\1")


def relative_links(text: str) -> list[str]:
    """The relative link targets of Markdown `text` (code spans and fenced blocks skipped)."""
    text = _CODE_SPAN.sub("", _FENCE.sub("", text))
    targets = []
    for target in _LINK.findall(text):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # http:, https:, mailto:, ... and anchors within the page
        targets.append(target)
    return targets


MARKDOWN = sorted([ROOT / "README.md", *DOCS.rglob("*.md")])


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_to_existing_files(path):
    broken = []
    for target in relative_links(path.read_text()):
        file_part = target.split("#", 1)[0].split("?", 1)[0]
        if file_part and not (path.parent / file_part).exists():
            broken.append(target)
    assert not broken, f"{path.relative_to(ROOT)} links to files that do not exist: {broken}"


def test_link_finder_sees_links_and_skips_code():
    sample = ("[a](x.md#part) ![img](img/p.png \"t\") [w](https://e.org) [s](#sec) `[c](code.md)`\n"
              "```\n[f](fenced.md)\n```\n")
    assert relative_links(sample) == ["x.md#part", "img/p.png"]


_TEST_FILE = re.compile(r"tests/[\w/]+\.py")
_CITATION = re.compile(r"(tests/[\w/]+\.py)?::(test_\w+)")


def cited_tests(text: str) -> list[tuple[str, str]]:
    """(file, test name) of every `tests/x.py::test_name`, or `::test_name` in the last
    file named before it (C++ names such as tt::DataFormat do not start with test_)."""
    cited, current = [], None
    for match in re.finditer(rf"{_TEST_FILE.pattern}(?:::test_\w+)?|::test_\w+", text):
        found = _CITATION.fullmatch(match.group(0))
        if found is None:  # a file named alone
            current = match.group(0)
            continue
        current = found.group(1) or current
        cited.append((current, found.group(2)))
    return cited


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_cited_tests_exist(path):
    missing = []
    for file, name in cited_tests(path.read_text()):
        source = ROOT / file if file else None
        if source is None or not source.exists() or not re.search(rf"^def {name}\(", source.read_text(), re.M):
            missing.append(f"{file}::{name}")
    assert not missing, f"{path.relative_to(ROOT)} cites tests that do not exist: {missing}"


def test_citation_finder():
    text = "see `tests/a.py::test_x` and `::test_y`, then tests/b.py alone and ::test_z"
    assert cited_tests(text) == [("tests/a.py", "test_x"), ("tests/a.py", "test_y"), ("tests/b.py", "test_z")]
