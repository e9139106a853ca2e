"""The local runner's worker reads by an allow-list: a candidate that globs the machine for recorded cases finds
none (neither the run's trusted side, nor the task set, nor a copy anywhere else), nor can it read the machine's
seal key; right answers still run (the split runs of every other local test)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers.run_cache import run_cache
from lmrbench.benchmark.sandbox.running.local import LocalRunner, worker_reads
from lmrbench.core.sandbox import Worker
from lmrbench.core.treeview import TreeView
from lmrbench.harness.request import SandboxRequest
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.seal_key import key_path, machine_key

GLOB = r"""
import os
found, opened = [], 'no'
for top, dirs, files in os.walk('/'):
    dirs[:] = [d for d in dirs if os.path.join(top, d) not in ('/proc', '/sys')]
    found += [os.path.join(top, f) for f in files if f.startswith('case_') and f.endswith('.npz')]
opened = []
for path in PLANTED:
    try:
        open(path, 'rb').read()
        opened.append('read')
    except OSError as exc:
        opened.append(type(exc).__name__)
opened = ','.join(opened)
w = int(os.environ['LMRBENCH_CALL_FDS'].split(',')[1])
os.write(w, ('%d %s %s\n' % (len(found), opened, ' '.join(found[:3]))).encode())
"""
TRUSTED = ("import os\nr = int(os.environ['LMRBENCH_CALL_FDS'].split(',')[0])\n"
           "print('worker said', os.fdopen(r).readline().strip())")


@pytest.fixture
def sandbox(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("LMRBENCH_CACHE", str(run_cache(tmp_path_factory)))
    box = Sandbox(LocalRunner(), warm=False)
    yield box
    box.close()


def test_a_candidate_that_globs_the_machine_for_recorded_cases_finds_none(sandbox, small_task, tmp_path) -> None:
    data = small_task.repo_dir / "unit_test" / "data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "case_1.npz").write_bytes(b"recorded")  # the task's own, beside its tests
    planted = tmp_path / "elsewhere" / "case_2.npz"  # a copy anywhere else on the machine
    planted.parent.mkdir()
    planted.write_bytes(b"recorded")
    key = key_path()
    machine_key()  # the machine's seal key: a candidate that read it could re-seal forged evidence
    probe = GLOB.replace("PLANTED", repr([str(planted), str(key)]))
    worker = Worker(tree=TreeView(small_task.repo_dir, drop=frozenset({"unit_test"})), argv=["python", "-c", probe])
    res = sandbox.run(SandboxRequest(small_task, small_task.repo_dir, ["python", "-c", TRUSTED], 300, worker=worker))
    assert res.exit_code == 0 and res.infra_error is None, res
    said = next(line.split(maxsplit=4) for line in res.output.splitlines() if line.startswith("worker said"))
    if "no Landlock in this kernel" in res.output + res.worker_output:
        pytest.fail("this kernel has no Landlock: the local runner cannot confine a candidate's reads here")
    assert said[2:4] == ["0", "PermissionError,PermissionError"], res.output


def test_the_allow_list_is_the_interpreter_and_the_system_not_the_machine(tmp_path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(os.path.realpath("/proc/self/exe"))
    reads = worker_reads(venv)
    prefix = Path(os.path.realpath("/proc/self/exe")).parents[1]
    assert str(venv) in reads and "/" not in reads and str(Path.home()) not in reads
    assert str(prefix) in reads or str(prefix / "lib") in reads
    assert not any(Path(r) in Path(__file__).resolve().parents for r in reads)  # lmrbench's checkout is not in it
