"""``task export --official`` refuses to replace an export or to write inside the task (the export run under the
official loop is in tests/docker/test_official_export_docker.py)."""

from __future__ import annotations

import pytest


def test_export_refuses_to_replace_and_to_write_inside_the_task(tmp_path):
    from helpers.small_task import write_task
    from lmrbench.authoring.script_mode import has_main_block
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
