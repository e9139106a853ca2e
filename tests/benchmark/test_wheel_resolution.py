"""Wheels resolved for the image's exact Python and platform, kept once per file, and a failure's cause in one
line."""

from __future__ import annotations

import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

from lmrbench.benchmark.sandbox.environments.build_log import failure_headline
from lmrbench.benchmark.sandbox.environments.layers import plan_layers
from lmrbench.benchmark.sandbox.environments.wheelhouse import WheelTarget, resolve_wheels, wheel_files_dir, wheel_name
from lmrbench.errors import LmrError

IMAGE = WheelTarget(python="3.11.2", glibc="2.36")
"""Debian bookworm's Python: what the bootstrapped base image runs."""
HOST_LIKE = WheelTarget(python="3.11.7", glibc="2.36")


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("LMRBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _requires_python(wheel: Path) -> str:
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        return Parser().parsestr(z.read(meta).decode()).get("Requires-Python", "")


def _version(wheels: list[Path], project: str) -> str:
    return next(v for n, v in map(wheel_name, wheels) if n == project)


def test_a_release_that_needs_a_newer_micro_version_is_not_picked_for_the_image():
    """soupsieve's newest releases need Python >= 3.11.5: resolved for 3.11.2 (the image), the wheel must
    install there; resolved for 3.11.7 (this host), it is another release."""
    image = resolve_wheels(["soupsieve"], IMAGE)
    host = resolve_wheels(["soupsieve"], HOST_LIKE)
    assert _version(image, "soupsieve") != _version(host, "soupsieve"), "the two Pythons no longer differ here"
    soup = next(p for p in image if p.name.startswith("soupsieve-"))
    from packaging.specifiers import SpecifierSet

    assert "3.11.2" in SpecifierSet(_requires_python(soup))
    assert "3.11.2" not in SpecifierSet(_requires_python(next(p for p in host if p.name.startswith("soupsieve-"))))


def test_a_wheel_tagged_for_an_older_glibc_is_accepted():
    """manylinux_2_17 wheels run on glibc 2.36: the target names every tag up to its glibc."""
    assert "manylinux_2_17_x86_64" in IMAGE.platforms() and "manylinux2014_x86_64" in IMAGE.platforms()
    wheels = resolve_wheels(["markupsafe==2.1.5"], IMAGE)
    assert any("manylinux" in p.name and p.name.startswith("MarkupSafe-2.1.5") for p in wheels)


def test_wheels_are_kept_once_and_a_changed_requirement_downloads_only_what_changed(monkeypatch):
    first = resolve_wheels(["iniconfig==2.0.0"], IMAGE)
    ini = next(p for p in first if p.name.startswith("iniconfig-"))
    inode = ini.stat().st_ino
    second = resolve_wheels(["iniconfig==2.0.0", "six==1.16.0"], IMAGE)
    assert ini in second and ini.stat().st_ino == inode
    names = [p.name for p in wheel_files_dir().iterdir()]
    assert len(names) == len(set(names)) and any(n.startswith("six-1.16.0") for n in names)
    # an unchanged requirement set needs no index at all: its resolution is remembered
    monkeypatch.setenv("PIP_INDEX_URL", "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_FIND_LINKS", "")
    assert resolve_wheels(["iniconfig==2.0.0", "six==1.16.0"], IMAGE) == second
    with pytest.raises(LmrError, match="pip could not download"):
        resolve_wheels(["iniconfig==2.0.0", "six==1.17.0"], IMAGE)


def test_the_framework_layer_takes_the_framework_project_and_its_dependencies():
    """A stand-in framework (pytest-timeout, which depends on pytest) splits off with its dependency; the task
    layer keeps the rest."""
    plan = plan_layers(["pytest-timeout==2.3.1", "six==1.16.0"], IMAGE, projects=frozenset({"pytest-timeout"}))
    assert plan.pins == ["pytest-timeout==2.3.1"]
    fw = {wheel_name(p)[0] for p in plan.framework}
    assert {"pytest-timeout", "pytest"} <= fw
    assert {wheel_name(p)[0] for p in plan.task} == {"six"}
    other = plan_layers(["pytest-timeout==2.3.1", "iniconfig==2.0.0"], IMAGE, projects=frozenset({"pytest-timeout"}))
    assert other.framework_tag("base-id", "t") == plan.framework_tag("base-id", "t")
    assert plan_layers(["six==1.16.0"], IMAGE, projects=frozenset({"pytest-timeout"})).framework == []


PIP_BACKTRACK = (
    "Collecting soupsieve>=4\n  Downloading soupsieve-4.1.3-py3-none-any.whl (36 kB)\n"
    "INFO: pip is looking at multiple versions of beautifulsoup4 to determine which version is compatible with "
    "other requirements.\n"
    "ERROR: Package 'soupsieve' requires a different Python: 3.11.2 not in '>=3.11.5'\n"
)
PIP_CONFLICT = """\
ERROR: Cannot install peft==0.10.0 and transformers==4.20.0 because these package versions have conflicting \
dependencies.

The conflict is caused by:
    The user requested transformers==4.20.0
    peft 0.10.0 depends on transformers>=4.36

To fix this you could try to:
1. loosen the range of package versions you've specified
ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/
"""
APT_FAILURE = """\
Step 4/9 : RUN apt-get install -y libfoo
 ---> Running in 1234
E: Unable to locate package libfoo
The command '/bin/sh -c apt-get install -y libfoo' returned a non-zero code: 100
"""


@pytest.mark.parametrize(("log", "cause"), [
    (PIP_BACKTRACK, "ERROR: Package 'soupsieve' requires a different Python: 3.11.2 not in '>=3.11.5'"),
    (PIP_CONFLICT, "ERROR: Cannot install peft==0.10.0 and transformers==4.20.0 because these package versions "
                   "have conflicting dependencies. peft 0.10.0 depends on transformers>=4.36"),
    (APT_FAILURE, "E: Unable to locate package libfoo"),
])
def test_a_failure_is_named_by_the_line_that_says_why(log, cause):
    assert failure_headline(log) == cause


def test_a_tried_requirement_replaces_the_line_of_the_same_project():
    from lmrbench.benchmark.sandbox.running.try_requirements import changed_requirements

    current = ["torch==2.4.1", "peft>=0.5", "Py_Arrow"]
    assert changed_requirements(current, ["PEFT==0.10.0", "py-arrow==12.0.1", "rich"]) == [
        "torch==2.4.1", "PEFT==0.10.0", "py-arrow==12.0.1", "rich"]


DATA = Path(__file__).parent / "data"
PREAMBLE = ("ERROR: Ignored the following versions that require a different python version: 0.5 Requires-Python "
            ">=3.12; 0.6 Requires-Python >=3.12\n")
"""The line pip on the bootstrapped base writes first whenever an index holds versions for other Pythons."""


@pytest.mark.parametrize("preamble", ["", PREAMBLE], ids=["host", "base"])
def test_a_requirement_without_a_wheel_is_named_with_why_not_by_the_first_error_line(preamble):
    """pip's real output for the DPO repository's wandb==0.15.3 (pathtools: a source distribution only) and
    hydra-core==1.3.2 (antlr4-python3-runtime 4.9: likewise) for the base image's Python."""
    wandb = preamble + (DATA / "pip_download_wandb.txt").read_text()
    assert failure_headline(wandb) == ("ERROR: No matching distribution found for pathtools (required by wandb): no "
                                       "wheel for this Python and platform (a source distribution only, or none)")
    hydra = preamble + (DATA / "pip_download_hydra.txt").read_text()
    assert failure_headline(hydra) == (
        "ERROR: No matching distribution found for antlr4-python3-runtime==4.9.* (required by hydra-core): no wheel "
        "that fits for this Python and platform (wheels there: 4.11.0, 4.11.1, 4.12.0, 4.13.0, 4.13.1, 4.13.2)")


def test_the_wheel_to_build_is_read_from_the_whole_output_with_the_version_asked_for():
    from lmrbench.benchmark.sandbox.environments.wheelhouse import wheel_to_build

    lines = ["wandb==0.15.3", "hydra-core==1.3.2"]
    assert wheel_to_build(PREAMBLE + (DATA / "pip_download_wandb.txt").read_text(), lines) == (
        "pathtools", ["pathtools"])
    assert wheel_to_build((DATA / "pip_download_hydra.txt").read_text(), lines) == (
        "antlr4-python3-runtime", ["antlr4-python3-runtime==4.9.*"])
    assert wheel_to_build("ERROR: No matching distribution found for Pathtools\n", ["pathtools==0.1.2"]) == (
        "Pathtools", ["pathtools==0.1.2"])  # the task's own pin wins
    assert wheel_to_build(PIP_CONFLICT, lines) is None
