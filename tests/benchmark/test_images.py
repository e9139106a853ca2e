"""The bootstrapped base image, the images CLI, and host-side wheelhouses."""

from __future__ import annotations

import pytest

from lmrbench.benchmark.sandbox.environments.wheelhouse import (
    WheelTarget,
    build_wheelhouse,
    pip_options,
    requirement_lines,
    requirements_hash,
)
from lmrbench.errors import LmrError


def test_requirement_lines_keep_requirements_and_reject_pip_options(tmp_path):
    assert requirement_lines("# c\nnumpy>=1.26  # fast\n\nscipy\n") == ["numpy>=1.26", "scipy"]
    with pytest.raises(LmrError, match="'-e'"):
        requirement_lines("-e .\nnumpy\n")


def test_index_options_name_where_a_cpu_torch_comes_from():
    text = "--extra-index-url https://download.pytorch.org/whl/cpu\n--find-links=/srv/wheels\ntorch==2.4.1\n"
    assert requirement_lines(text) == ["torch==2.4.1"]
    assert pip_options(text) == ["--extra-index-url", "https://download.pytorch.org/whl/cpu",
                                 "--find-links", "/srv/wheels"]


def test_requirements_hash_depends_on_requirements_and_target():
    t311 = WheelTarget(python="3.11.2", glibc="2.36")
    assert requirements_hash(["numpy"], t311) == requirements_hash(["numpy"], t311)
    assert requirements_hash(["numpy"], t311) != requirements_hash(["scipy"], t311)
    assert requirements_hash(["numpy"], t311) != requirements_hash(["numpy"], WheelTarget(python="3.10"))


def test_wheelhouse_is_downloaded_once_for_the_target(tmp_path, monkeypatch):
    monkeypatch.setenv("LMRBENCH_CACHE", str(tmp_path))
    target = WheelTarget(python="3.11.2", glibc="2.36")
    folder = build_wheelhouse(["iniconfig"], target)
    names = sorted(p.name for p in folder.iterdir())
    assert any(n.startswith("iniconfig-") for n in names) and any(n.startswith("pytest-") for n in names)
    assert all(n.endswith(".whl") for n in names)
    stamp = folder.stat().st_mtime_ns
    assert build_wheelhouse(["iniconfig"], target) == folder and folder.stat().st_mtime_ns == stamp
    assert [p.name for p in tmp_path.joinpath("wheels").iterdir()] == [folder.name]


def test_unknown_requirement_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("LMRBENCH_CACHE", str(tmp_path))
    with pytest.raises(LmrError, match="pip could not"):
        build_wheelhouse(
            ["lmrbench-no-such-distribution-xyz==0.0.1"], WheelTarget(python="3.11.2", glibc="2.36")
        )
    assert not (tmp_path / "wheels").exists() or list((tmp_path / "wheels").iterdir()) == []
