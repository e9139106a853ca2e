"""Per-test costs, for keeping the suite inside CI's time: ``PYTHONPATH=tests pytest -p helpers.costs`` appends one JSON
line per test (node id, wall seconds, CPU seconds of the test's process and of the children it waited for, when it
started and on which xdist worker: the timeline shows a tail where workers sit idle) to the file named by
$LMRBENCH_TEST_COSTS (default ``test-costs.jsonl``). CPU seconds hold on a busy machine where wall seconds do not; a
container's CPU is the engine's and shows only in wall seconds."""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator

import pytest


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    start, wall, cpu = time.time(), time.monotonic(), _cpu()
    yield
    line = {"id": item.nodeid, "wall": round(time.monotonic() - wall, 3), "cpu": round(_cpu() - cpu, 3),
            "start": round(start, 3), "worker": os.environ.get("PYTEST_XDIST_WORKER", "")}
    with open(os.environ.get("LMRBENCH_TEST_COSTS", "test-costs.jsonl"), "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")
