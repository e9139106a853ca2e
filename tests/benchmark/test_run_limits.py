"""Memory, CPUs, GPUs and the Hugging Face cache: from the command line, else the task's info.json."""

from __future__ import annotations

import json

import pytest

from helpers.small_task import write_task
from lmrbench.benchmark.sandbox.docker import DockerRunner
from lmrbench.benchmark.sandbox.run_limits import RunLimits, container_resources, device_requests
from lmrbench.core.taskset import load_task
from lmrbench.errors import LmrError

CGROUP = ("cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes; "
          "cat /sys/fs/cgroup/cpu.max 2>/dev/null || cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us")


def _task(tmp_path, resources=None):
    path = write_task(tmp_path / "bench")
    if resources is not None:
        info = json.loads((path / "info.json").read_text())
        info["resources"] = resources
        (path / "info.json").write_text(json.dumps(info))
    return load_task(path)


@pytest.mark.docker
def test_the_task_declares_memory_and_cpus_and_the_command_line_wins(tmp_path, base_image):
    task = _task(tmp_path, {"memory": "300m", "cpus": 0.5})
    declared = DockerRunner(base_image=base_image).run(task, task.repo_dir, ["sh", "-c", CGROUP], timeout=120)
    assert declared.exit_code == 0, declared.output
    assert declared.output.split()[0] == str(300 * 2**20) and "50000" in declared.output
    given = DockerRunner(base_image=base_image, memory="400m", cpus=1.5)
    wins = given.run(task, task.repo_dir, ["sh", "-c", CGROUP], timeout=120)
    assert wins.output.split()[0] == str(400 * 2**20) and "150000" in wins.output


@pytest.mark.docker
def test_the_hugging_face_cache_is_mounted_read_only_and_offline(tmp_path, base_image):
    cache = tmp_path / "hf"
    (cache / "hub").mkdir(parents=True)
    (cache / "hub" / "weights.txt").write_text("w\n")
    task = _task(tmp_path, {"hf_cache": True})
    runner = DockerRunner(base_image=base_image, hf_cache=cache)
    script = "cat $HF_HOME/hub/weights.txt; echo $HF_HUB_OFFLINE; touch $HF_HOME/x 2>/dev/null || echo read-only"
    res = runner.run(task, task.repo_dir, ["sh", "-c", script], timeout=120)
    assert res.exit_code == 0 and res.output.split() == ["w", "1", "read-only"], res.output


def test_a_task_that_needs_the_cache_without_one_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("HF_HOME", raising=False)
    task = _task(tmp_path, {"hf_cache": True})
    with pytest.raises(LmrError, match="needs the Hugging Face cache .* pass --hf-cache PATH"):
        container_resources(task, RunLimits())


def test_gpu_requests_for_all_a_count_and_device_ids():
    assert device_requests(None) == [] and device_requests("0") == []
    (every,) = device_requests("all")
    assert every["Count"] == -1 and every["Capabilities"] == [["gpu"]]
    assert device_requests(2)[0]["Count"] == 2 and device_requests("2")[0]["Count"] == 2
    assert device_requests("device=0,1")[0]["DeviceIDs"] == ["0", "1"]
    with pytest.raises(LmrError, match="--gpus 'many'"):
        device_requests("many")
