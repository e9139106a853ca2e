"""A task made by ``task new`` + ``task record`` runs under the official LMR-Bench evaluation after
``task export --official``: its golden code passes there and its masked stub fails."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from official_loop import official_build, official_run, official_statistics

SCRIPT = str(Path(sys.executable).with_name("lmrbench"))


def _lmrbench(*args: str) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout + out.stderr
    return out


@pytest.mark.long
@pytest.mark.docker
@pytest.mark.timeout(1500)
def test_recorded_task_passes_the_official_loop_with_its_golden_code(fixture_repo, tmp_path, base_image,
                                                                     docker_engine):
    bench, exported = tmp_path / "bench", tmp_path / "exported"
    _lmrbench("task", "new", "--repo", str(fixture_repo), "--function", "losses.py::preference_loss",
              "--instruction", "Implement the DPO loss.", "--category", "loss", str(bench),
              "--name", "1-Toy")
    _lmrbench("task", "record", str(bench / "1-Toy"), "--impl", "1", "--command", "python train.py")
    out = _lmrbench("task", "export", str(bench / "1-Toy"), "--official", "--out", str(exported),
                    "--base-image", base_image)
    assert out.stdout.startswith("exported ")
    assert "when run as a script" in (bench / "1-Toy" / "src-repo" / "unit_test" / "unit_test_1.py").read_text()
    task = exported / "1-Toy"
    info = json.loads((task / "info.json").read_text())
    assert info["implementations"][0]["retrieval_content"] == []
    assert json.loads((task / "src-repo" / "paper.json").read_text()) == {}
    assert "COPY . ." not in (task / "Dockerfile").read_text()

    tag = official_build(task)
    try:
        masked = official_run(task, tag, tmp_path)  # the loop's status is its last test's: 1 here
        assert official_statistics(task) == {"unit_test_1.log": False}, masked.stdout + masked.stderr

        shutil.copyfile(task / "golden_files" / "losses_golden.py", task / "src-repo" / "losses.py")
        golden = official_run(task, tag, tmp_path)
        assert golden.returncode == 0, golden.stderr
        assert official_statistics(task) == {"unit_test_1.log": True}
        log = (task / "src-repo" / "unit_test" / "logs" / "unit_test_1.log").read_text()
        assert log.count(": Passed") >= 1 and "Failed" not in log
    finally:
        docker_engine.images.remove(tag, force=True)
