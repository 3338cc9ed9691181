"""The documentation stays true to the repository: it names only what a clone has, its package
tables match the folders, and every module it points to exists."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
from pathlib import Path

import fuseforks.stores
from fuseforks.events.types import EVENT_TYPES
from fuseforks.stores.store import OrderedRecord, Record, TurnLog

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "fuseforks"
DOCS = ROOT / "docs"

# References to documents and trackers a user who clones the repository does not have.
EXTERNAL_REFERENCES = [
    re.compile(r"SPEC\.md"),
    re.compile(r"shared folder"),
    re.compile(r"\.\./shared"),
    re.compile(r"seed D"),
    re.compile(r"spec70"),
    re.compile(r"issue \d", re.IGNORECASE),
    re.compile(r"SPEC §"),
    re.compile(r"§"),
    re.compile(r"\bthe seed\b"),
    re.compile(r"\bseed's\b"),
    re.compile(r"design record"),
]


def _text_files() -> list[Path]:
    files = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    files += sorted(
        p for p in PACKAGE.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )
    return files


def test_no_file_refers_to_documents_outside_the_repository() -> None:
    hits = []
    for path in _text_files():
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(lines, start=1):
            for pattern in EXTERNAL_REFERENCES:
                if pattern.search(line):
                    hits.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
                    break
    assert hits == [], "external references left:\n" + "\n".join(hits)


def _subpackages() -> set[str]:
    return {p.parent.name for p in PACKAGE.glob("*/__init__.py")}


def _section(markdown: str, heading: str) -> str:
    start = markdown.index(heading)
    rest = markdown[start + len(heading):]
    end = re.search(r"^#{1,2} ", rest, re.MULTILINE)
    return rest[: end.start()] if end else rest


def _table_packages(section: str) -> list[str]:
    names = []
    for line in section.splitlines():
        if line.startswith("|"):
            names += re.findall(r"`fuseforks/([a-z_]+)/?`", line)
    return names


def test_the_design_layer_table_names_exactly_the_subpackages() -> None:
    section = _section((DOCS / "design.md").read_text(encoding="utf-8"),
                       "## Layers and packages")
    names = _table_packages(section)
    assert sorted(names) == sorted(set(names)), "one row per subpackage"
    assert set(names) == _subpackages()


def test_the_readme_layout_table_names_exactly_the_subpackages() -> None:
    section = _section((ROOT / "README.md").read_text(encoding="utf-8"), "## Layout")
    names = _table_packages(section)
    assert sorted(names) == sorted(set(names)), "one row per subpackage"
    assert set(names) == _subpackages()


def test_every_module_the_image_rules_name_exists() -> None:
    text = (DOCS / "image-rules.md").read_text(encoding="utf-8")
    full = re.findall(r"fuseforks/[a-z_/]+\.py", text)
    short = re.findall(r"(?<![\w/.-])([a-z_]+/[a-z_]+\.py)", text)
    tests = re.findall(r"(?<![\w/.-])(tests/[a-z_/]+\.py)", text)
    assert full, "the rules name their modules"
    missing = [m for m in full + tests if not (ROOT / m).is_file()]
    missing += [m for m in short if not (PACKAGE / m).is_file()]
    assert missing == []


def test_the_design_lists_every_event_kind() -> None:
    section = _section((DOCS / "design.md").read_text(encoding="utf-8"), "## Event vocabulary")
    listed = set(re.findall(r"^\| `([A-Za-z0-9]+)` \|", section, re.MULTILINE))
    assert listed == {kind.__name__ for kind in EVENT_TYPES}


def test_every_command_is_in_the_readmes_table() -> None:
    from fuseforks.cli import COMMANDS

    table = _section((ROOT / "README.md").read_text(encoding="utf-8"), "## Commands")
    listed = set(re.findall(r"^\| `fuseforks ([a-z]+)", table, flags=re.MULTILINE))
    listed |= set(re.findall(r"`, `fuseforks ([a-z]+)", table))
    assert listed == set(COMMANDS)


def test_the_design_states_the_event_schema_version_of_the_code() -> None:
    from fuseforks.events.codec import SCHEMA_VERSION

    text = (DOCS / "design.md").read_text(encoding="utf-8")
    glossary = (DOCS / "glossary.md").read_text(encoding="utf-8")
    stated = re.findall(r"`SCHEMA_VERSION`,? \(?now (\d+)", text + glossary)
    assert stated == [str(SCHEMA_VERSION)] * 2
    # every version before it has its section of upcasters
    section = _section(text, "## Envelope, schema versions and upcasters")
    steps = re.findall(r"^- \*\*v(\d+) → v(\d+)\*\*", section, re.MULTILINE)
    assert steps == [(str(n), str(n + 1)) for n in range(SCHEMA_VERSION)]


def test_the_design_lists_what_the_package_exports() -> None:
    import fuseforks

    text = (DOCS / "design.md").read_text(encoding="utf-8")
    paragraph = text[text.index("Outside the subpackages"):]
    paragraph = paragraph[: paragraph.index("\n\n")]
    named = set(re.findall(r"`([A-Za-z_]+)`", paragraph))
    exported = set(fuseforks.__all__) - {"__version__"}
    assert exported - named == set(), "exported but not in the design"
    assert {n for n in named if n[0].isupper()} - exported == set(), "named but not exported"


TIERS = {"turn log": TurnLog, "record": Record, "ordered record": OrderedRecord}
"""The tiers of the store contract, as the design names them."""


def _store_modules() -> list[object]:
    return [importlib.import_module(f"fuseforks.stores.{m.name}")
            for m in pkgutil.iter_modules(fuseforks.stores.__path__)]


def test_the_design_lists_every_store_with_the_tiers_it_claims() -> None:
    section = _section((DOCS / "design.md").read_text(encoding="utf-8"),
                       "## Stores\n")
    stated = {name: (module, tiers) for name, module, tiers in re.findall(
        r"^\| `(\w+)` \| `(fuseforks/stores/\w+\.py)` \| ([a-z ,]+) \|$", section, re.MULTILINE)}
    actual = {
        kind.__name__: (kind.__module__.replace(".", "/") + ".py",
                        ", ".join(name for name, tier in TIERS.items() if issubclass(kind, tier)))
        for module in _store_modules() for kind in vars(module).values()
        if isinstance(kind, type) and issubclass(kind, Record) and not inspect.isabstract(kind)
        and kind.__module__ == getattr(module, "__name__", "")
    }
    assert stated == actual


def test_every_store_version_the_docs_state_is_the_codes() -> None:
    versions = {name: value for module in _store_modules()
                for name, value in vars(module).items() if name.endswith("_STORE_VERSION")}
    assert set(versions) == {"SQLITE_STORE_VERSION", "POSTGRES_STORE_VERSION"}
    design = (DOCS / "design.md").read_text(encoding="utf-8")
    assert set(re.findall(r"`(\w+_STORE_VERSION)` \(now \d+\)", design)) == set(versions)
    for path in [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        stated = re.findall(r"`(\w*STORE_VERSION)` \(now (\d+)\)", text)
        assert [(name, int(value)) for name, value in stated] == [
            (name, versions.get(name)) for name, _ in stated], path.name
        assert re.search(r"`STORE_VERSION`", text) is None, f"{path.name}: which store version?"


def test_every_picture_the_readme_shows_is_in_the_repository() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert "docs/console-turn.png" in pictures
    for picture in pictures:
        assert (ROOT / picture).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", picture


def test_the_npm_versions_the_docs_name_are_the_ones_the_tests_run() -> None:
    """The docs' `npx` lines name each package at the version of tests/npm/package.json."""
    pinned = json.loads((ROOT / "tests" / "npm" / "package.json").read_text())["dependencies"]
    named = re.findall(r"(@[\w-]+/[\w-]+)@(\d[\w.-]*)", (DOCS / "gateway.md").read_text())
    assert {name for name, _ in named} >= {"@playwright/mcp",
                                          "@modelcontextprotocol/server-everything"}
    assert [(name, version) for name, version in named if pinned.get(name) != version] == []
