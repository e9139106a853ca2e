"""constraints.txt (the versions the suite passed with) must satisfy pyproject.toml's bounds, or the README's
install command fails with ResolutionImpossible."""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not pinned with =="
            pins[canonicalize_name(name)] = version
    return pins


def test_every_dependency_is_pinned_within_its_bounds():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = _pins()
    extras = [r for group in project["optional-dependencies"].values() for r in group]
    reqs = [Requirement(r) for r in project["dependencies"] + extras]
    for req in reqs:
        name = canonicalize_name(req.name)
        if name == "lmrbench":  # an extra that names the project's own other extras
            continue
        assert name in pins, f"constraints.txt lacks {req.name}"
        assert req.specifier.contains(pins[name], prereleases=True), f"{req.name}=={pins[name]} is outside {req}"
