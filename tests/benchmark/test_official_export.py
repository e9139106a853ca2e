"""``task export --official`` refuses to replace an export or to write inside the task (the export run under the
official loop is in tests/docker/test_official_export_docker.py)."""

from __future__ import annotations

import pytest


def test_export_refuses_to_replace_and_to_write_inside_the_task(tmp_path):
    from helpers.small_task import write_task
    from lmrbench.authoring.record.script_mode import has_main_block
    from lmrbench.benchmark.pipeline.official_export import export_official
    from lmrbench.core.taskset import load_task
    from lmrbench.errors import LmrError

    task = load_task(write_task(tmp_path / "bench"))
    with pytest.raises(LmrError, match="outside the task folder"):
        export_official(task, task.path / "out", wheels=False)
    res = export_official(task, tmp_path / "out", wheels=False)
    assert res.scripts == ["unit_test/unit_test_1.py", "unit_test/unit_test_2.py"]
    assert not has_main_block((task.repo_dir / "unit_test" / "unit_test_1.py").read_text())
    with pytest.raises(LmrError, match="use --force"):
        export_official(task, tmp_path / "out", wheels=False)
    export_official(task, tmp_path / "out", wheels=False, force=True)
    assert (tmp_path / "out" / "1-Calc" / "calc" / "paper.json").read_text() == "{}"


def _local_wheel(folder, name: str = "lmrbench_local_only", version: str = "1.0"):
    """A pure-Python wheel that no index holds, in ``folder`` (what a task's --find-links line points at)."""
    import zipfile

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{name}/__init__.py", "VALUE = 1\n")
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name.replace('_', '-')}\nVersion: {version}\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(f"{info}/RECORD", "")
    return path


@pytest.mark.network  # the export adds pytest's wheel, from PyPI
def test_the_export_resolves_its_wheels_with_the_index_options_the_task_build_honours(tmp_path, monkeypatch):
    """A requirement only a ``--find-links`` folder holds: the task's own build finds it there, and so must the
    export's wheels (it used to resolve without the option line, and failed)."""
    from helpers.small_task import write_task
    from lmrbench.benchmark.pipeline.official_export import WHEELS, export_official
    from lmrbench.core.taskset import load_task

    monkeypatch.setenv("LMRBENCH_CACHE", str(tmp_path / "cache"))
    local = _local_wheel(tmp_path / "local-wheels")
    task_dir = write_task(tmp_path / "bench")
    (task_dir / "calc" / "requirements.txt").write_text(
        f"--find-links {local.parent}\nlmrbench-local-only==1.0\n")
    export_official(load_task(task_dir), tmp_path / "out")
    shipped = sorted(p.name for p in (tmp_path / "out" / "1-Calc" / WHEELS).iterdir())
    assert local.name in shipped and any(n.startswith("pytest-") for n in shipped)
    assert "--find-links" in (tmp_path / "out" / "1-Calc" / "calc" / "requirements.txt").read_text()
