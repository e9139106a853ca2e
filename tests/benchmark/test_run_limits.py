"""Memory, CPUs, GPUs and the Hugging Face cache: from the command line, else the task's info.json."""

from __future__ import annotations

import json

import pytest

from helpers.small_task import write_task
from lmrbench.benchmark.sandbox.running.run_limits import RunLimits, container_resources, device_requests
from lmrbench.core.taskset import load_task
from lmrbench.errors import LmrError


def _task(tmp_path, resources=None):
    path = write_task(tmp_path / "bench")
    if resources is not None:
        info = json.loads((path / "info.json").read_text())
        info["resources"] = resources
        (path / "info.json").write_text(json.dumps(info))
    return load_task(path)


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
