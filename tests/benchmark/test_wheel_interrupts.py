"""Wheel builds that are interrupted leave nothing behind and save no empty reason; long ones say so."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers.small_task import write_task
from lmrbench.subprocess_progress import run_with_heartbeat

SCRIPT = str(Path(sys.executable).with_name("lmrbench"))


@pytest.fixture
def silent_index():
    """An index on 127.0.0.1 that accepts connections and never answers: pip waits on it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/simple"
    stop.set()
    thread.join()
    for s in held:
        s.close()
    server.close()


def _pip_env(tmp_path: Path, index: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    return {**env, "LMRBENCH_CACHE": str(tmp_path / "cache"), "PIP_INDEX_URL": index, "PIP_DEFAULT_TIMEOUT": "120",
            "PIP_RETRIES": "0"}


def _wait_for(pred, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting")


def _assert_nothing_half_written(cache: Path) -> None:
    """No wheelhouse folder (complete or staged) and no wheel file that is not a whole zip."""
    import zipfile

    wheels, files = cache / "wheels", cache / "wheel-files"
    assert not wheels.exists() or list(wheels.iterdir()) == []
    assert not files.exists() or all(zipfile.is_zipfile(p) for p in files.iterdir())
    assert not (cache / "wheel-sets").exists() or list((cache / "wheel-sets").iterdir()) == []


def _pip_children(pid: int) -> list[int]:
    out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def test_sigterm_during_a_wheel_download_leaves_no_temp_folder(tmp_path, silent_index):
    task = write_task(tmp_path / "bench")
    (task / "calc" / "requirements.txt").write_text("iniconfig\n")
    proc = subprocess.Popen([SCRIPT, "task", "export", str(task), "--official", "--out", str(tmp_path / "out")],
                            env=_pip_env(tmp_path, silent_index), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    _wait_for(lambda: bool(_pip_children(proc.pid)))  # pip is downloading (from an index that never answers)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err, err
    _assert_nothing_half_written(tmp_path / "cache")
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_a_cancelled_wheel_download_stops_pip_and_saves_no_reason(tmp_path, silent_index, monkeypatch):
    """Ctrl-C while validate builds wheels: pip (in its own session) is stopped by lmrbench, the build raises
    Cancelled (never "pip could not ...", which would be saved as the task's fault) and leaves no folder."""
    from lmrbench.benchmark.sandbox.environments.wheelhouse import WheelTarget, build_wheelhouse
    from lmrbench.progress import Cancelled

    for key, value in _pip_env(tmp_path, silent_index).items():
        monkeypatch.setenv(key, value)
    for key in [k for k in os.environ if k.startswith("PIP_") and k not in ("PIP_INDEX_URL", "PIP_DEFAULT_TIMEOUT",
                                                                             "PIP_RETRIES")]:
        monkeypatch.delenv(key)
    cancel = threading.Event()
    threading.Timer(3.0, cancel.set).start()
    started = time.monotonic()
    with pytest.raises(Cancelled):
        build_wheelhouse(["iniconfig"], WheelTarget(python="3.11", glibc="2.36"), cancel=cancel)
    assert time.monotonic() - started < 30
    _assert_nothing_half_written(tmp_path / "cache")
    assert _pip_children(os.getpid()) == []


def test_a_long_child_process_is_reported_while_it_runs():
    lines: list[str] = []

    class Lines:
        def start(self, label, total):
            pass

        def advance(self, n=1, detail=""):
            pass

        def log(self, line):
            lines.append(line)

    proc = run_with_heartbeat(["sleep", "1.2"], "pip: build wheels", Lines(), every=0.1)
    assert proc.returncode == 0
    assert len(lines) >= 3 and all(ln.startswith("note: pip: build wheels: still running (") for ln in lines)
