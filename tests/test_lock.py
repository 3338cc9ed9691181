"""The test environment's lock stays true: it holds every dependency pyproject.toml names for the
test environment, each at a version the stated bounds allow, and the README names the versions
the lock holds."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "test.txt"


def _locked() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in LOCK.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith((" ", "#", "-")):
            continue
        requirement = Requirement(line)
        [specifier] = requirement.specifier
        assert specifier.operator == "==", line
        pins[canonicalize_name(requirement.name)] = specifier.version
    return pins


def _locked_extras() -> list[str]:
    """The extras the lock is made with: `-e .[…]` in requirements/test.in."""
    text = (ROOT / "requirements" / "test.in").read_text(encoding="utf-8")
    (extras,) = re.findall(r"^-e \.\[([\w,]+)\]$", text, re.MULTILINE)
    return extras.split(",")


def _wanted() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    names = project["project"]["dependencies"] + [
        requirement for extra in _locked_extras()
        for requirement in project["project"]["optional-dependencies"][extra]]
    names += project["build-system"]["requires"]
    return [Requirement(name) for name in names]


def test_the_lock_is_made_with_the_test_extras_and_the_clouds_credentials() -> None:
    assert set(_locked_extras()) >= {"test", "bench", "bedrock", "vertex", "azure"}


def test_the_lock_pins_every_dependency_within_its_bounds() -> None:
    locked = _locked()
    outside = {str(r): locked.get(canonicalize_name(r.name)) for r in _wanted()
               if locked.get(canonicalize_name(r.name)) not in r.specifier}
    assert outside == {}, "run `make lock`: pyproject.toml and requirements/test.txt disagree"


def test_the_readme_names_the_locked_versions() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    sentence = readme[readme.index("The suite last passed"):]
    sentence = sentence[sentence.index(" with Python"):]
    sentence = sentence[: sentence.index("(the rest: the lock)")]
    named = re.findall(r"`?([A-Za-z][\w-]*)`? (\d[\w.]*\d)", sentence)
    locked = _locked()
    assert len(named) >= 10
    assert {name: version for name, version in named if name != "Python"} == {
        name: locked[canonicalize_name(name)] for name, _ in named if name != "Python"}
