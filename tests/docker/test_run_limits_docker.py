"""Memory, CPUs and the Hugging Face cache as a container sees them."""

from __future__ import annotations

import pytest

from benchmark.test_run_limits import _task
from lmrbench.benchmark.sandbox.running.docker import DockerRunner
from lmrbench.harness.request import SandboxRequest
from lmrbench.harness.sandbox import Sandbox

CGROUP = ("cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes; "
          "cat /sys/fs/cgroup/cpu.max 2>/dev/null || cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us")


@pytest.mark.docker
def test_the_task_declares_memory_and_cpus_and_the_command_line_wins(tmp_path, base_image):
    task = _task(tmp_path, {"memory": "300m", "cpus": 0.5})
    declared = Sandbox(DockerRunner(base_image=base_image)).run(SandboxRequest(task, task.repo_dir,
                                                                               ["sh", "-c", CGROUP], 120))
    assert declared.exit_code == 0, declared.output
    assert declared.output.split()[0] == str(300 * 2**20) and "50000" in declared.output
    given = Sandbox(DockerRunner(base_image=base_image, memory="400m", cpus=1.5))
    wins = given.run(SandboxRequest(task, task.repo_dir, ["sh", "-c", CGROUP], 120))
    assert wins.output.split()[0] == str(400 * 2**20) and "150000" in wins.output


@pytest.mark.docker
def test_the_hugging_face_cache_is_mounted_read_only_and_offline(tmp_path, base_image):
    cache = tmp_path / "hf"
    (cache / "hub").mkdir(parents=True)
    (cache / "hub" / "weights.txt").write_text("w\n")
    task = _task(tmp_path, {"hf_cache": True})
    runner = Sandbox(DockerRunner(base_image=base_image, hf_cache=cache))
    script = "cat $HF_HOME/hub/weights.txt; echo $HF_HUB_OFFLINE; touch $HF_HOME/x 2>/dev/null || echo read-only"
    res = runner.run(SandboxRequest(task, task.repo_dir, ["sh", "-c", script], 120))
    assert res.exit_code == 0 and res.output.split() == ["w", "1", "read-only"], res.output
