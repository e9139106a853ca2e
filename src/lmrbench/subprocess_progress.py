"""Run a long child process: say every so often that it is still running, and stop it when cancelled.

Outside a terminal the CLI shows no progress bar, so a wheel build of many minutes printed nothing; the
heartbeat is a ``note:`` log line (shown without --verbose) every ``every`` seconds. The child runs in its own
session, so a Ctrl-C at the terminal reaches lmrbench alone: pip, hit by SIGINT in the middle of a download,
reports "no matching distribution", which must never be saved as the task's fault. lmrbench then stops the child
itself (on ``cancel`` or an exception such as KeyboardInterrupt) and raises.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
import time
from collections.abc import Callable

from lmrbench.progress import Cancelled, Progress

HEARTBEAT_SECONDS = 30.0
"""How often a long child process is reported as still running."""
_POLL = 0.2


def run_with_heartbeat(
    cmd: list[str],
    what: str,
    progress: Progress,
    *,
    every: float = HEARTBEAT_SECONDS,
    cancel: threading.Event | None = None,
    how_far: Callable[[], str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``cmd`` capturing its text output, with a ``note: <what>: still running (N s)`` line on ``progress``
    every ``every`` seconds. Cancelled when ``cancel`` is set; the child is killed whenever this call does
    not return normally. ``how_far`` says how far it got (e.g. megabytes downloaded), added to each line."""
    start = last = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            while True:
                try:
                    code = proc.wait(timeout=_POLL)
                    break
                except subprocess.TimeoutExpired:
                    pass
                if cancel is not None and cancel.is_set():
                    raise Cancelled()
                if time.monotonic() - last >= every:
                    last = time.monotonic()
                    far = how_far() if how_far is not None else ""
                    progress.log(f"note: {what}: still running ({last - start:.0f} s{'; ' + far if far else ''})")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(
            cmd, code, out.read().decode(errors="replace"), err.read().decode(errors="replace")
        )
