"""Warm runs: one boot script serves many runs of trusted code, one after another (``Warm`` in
``runtime/lmrbench_boot.py``), so that a validation pays for one container (or process) and one import of the
preloaded modules instead of one per run.

Only the task's own code is served warm: golden, masked and mutant variants, never a candidate's (which always
gets a fresh container). Each run is still a fresh fork with its own trees, users and out folder; between runs
the warm boot ends every process the run left and (in a container) removes what it wrote. This module holds
the boot's command and requests, the reading of its output run by run, and the boot as the harness's pool
keeps it (``WarmBoot``, over a transport's ``Channel``).
"""

from __future__ import annotations

import marshal
import secrets
import threading
import time
from dataclasses import dataclass

from lmrbench.core.sandbox import OUTPUT_TAIL_CHARS, Channel, RunResult, killed_at_timeout
from lmrbench.harness.payload import boot_command
from lmrbench.runtime.lmrbench_protocol import DONE_MARK, ENDED_MARK, OUT_LIMIT, RUN_MARK

IDLE_SECONDS = 120.0
"""A warm boot with no request for this long ends by itself (a runner gone without closing it)."""
GRACE_SECONDS = 30.0
"""How long past a run's timeout the host waits for the warm boot's word before it gives the boot up."""
PRELOAD = ("pytest",)
"""What a warm boot imports besides the task's frameworks: every trusted side then starts as a fork of it."""
_ERR_KEEP = OUTPUT_TAIL_CHARS


def warm_command(*, ids: dict[str, list[int]] | None, preload: list[str], env: dict[str, str],
                 nonce: str) -> list[str]:
    """The command that starts a warm boot."""
    spec: dict[str, object] = {"serve": {"nonce": nonce, "idle": IDLE_SECONDS}, "ids": ids, "env": dict(env),
                               "preload": list(preload), "root": "", "argv": []}
    return boot_command(spec)


def warm_preload(frameworks: tuple[str, ...] | list[str], extra: tuple[str, ...] | list[str] = ()) -> list[str]:
    """The modules a warm boot for a run with ``frameworks`` imports once; ``extra``: the installed modules the
    task's code imports (``harness.import_closure``), dotted names included."""
    return sorted({*frameworks, *PRELOAD, *extra})


def new_nonce() -> str:
    """A warm boot's nonce: its marks in the output are told from what a run prints."""
    return secrets.token_hex(8)


def request(spec: dict[str, object], data: bytes, timeout: float) -> bytes:
    """One run's request on a warm boot's stdin: the ``RUN_MARK`` line, the spec, the payload."""
    raw = marshal.dumps(spec, 4)
    return RUN_MARK + b"%d %d %d\n" % (len(raw), len(data), max(1, int(timeout * 1000))) + raw + data


@dataclass(frozen=True)
class Served:
    """How one warm run ended, as the warm boot said it."""

    exit_code: int
    timed_out: bool
    stdout: bytes
    """The run's own stdout: its frame."""
    output: str
    """The run's stderr (its last part), decoded."""


class Streams:
    """A warm boot's stdout and stderr as they arrive, cut into runs at its marks. Fed by reader threads;
    ``take`` waits for one run's end."""

    def __init__(self, nonce: str) -> None:
        self._done = DONE_MARK + nonce.encode() + b" "
        self._ended = b"\n" + ENDED_MARK + nonce.encode() + b" "
        self._cond = threading.Condition()
        self._out = bytearray()
        self._err = bytearray()
        self.closed = False

    def feed(self, stream: int, data: bytes) -> None:
        """Bytes of stdout (1) or stderr (2)."""
        with self._cond:
            if stream == 1:
                if len(self._out) < OUT_LIMIT * 2 + 4096:
                    self._out.extend(data)
            else:
                self._err.extend(data)
                if len(self._err) > 2 * _ERR_KEEP and self._ended not in self._err:
                    del self._err[:len(self._err) - _ERR_KEEP]  # as a cold run, the end of the output is kept
            self._cond.notify_all()

    def close(self) -> None:
        """The boot's streams ended."""
        with self._cond:
            self.closed = True
            self._cond.notify_all()

    def take(self, n: int, timeout: float) -> Served | None:
        """Run ``n``'s end (its stdout and stderr removed from the buffers), or None when the boot ended or
        ``timeout`` seconds passed first."""
        done_line = self._done + b"%d " % n
        ended = self._ended + b"%d\n" % n
        with self._cond:
            ok = self._cond.wait_for(lambda: self.closed or (done_line in self._out and ended in self._err),
                                     timeout)
            if not ok or done_line not in self._out or ended not in self._err:
                return None
            at = self._out.index(done_line)
            end = self._out.index(b"\n", at)
            fields = bytes(self._out[at + len(done_line):end]).split()
            stdout = bytes(self._out[:at])
            del self._out[:end + 1]
            cut = self._err.index(ended)
            err = bytes(self._err[:cut])
            del self._err[:cut + len(ended)]
        try:
            code, timed_out = int(fields[0]), fields[1] == b"1"
        except (IndexError, ValueError):
            return None
        return Served(code, timed_out, stdout, err[-_ERR_KEEP:].decode("utf-8", errors="replace"))


class WarmBoot:
    """A warm boot the harness keeps in its pool: a transport's channel (a container's or a process's) with the
    run requests in and the runs' ends read from its streams."""

    def __init__(self, key: tuple[object, ...], streams: Streams, channel: Channel) -> None:
        """``channel``'s output feeds ``streams`` (the transport was given ``streams.feed`` and ``.close``)."""
        self.key, self.last_used, self.broken = key, time.monotonic(), False
        self.runs = 0
        self.streams, self.channel = streams, channel

    def serve(self, request: bytes, timeout: float) -> Served | None:
        """Send one run's request (numbered ``runs`` after the call) and wait for its end; None (and the boot
        broken) when it never came."""
        self.runs += 1
        try:
            self.channel.send(request)
        except (OSError, ValueError):
            self.broken = True
            return None
        served = self.streams.take(self.runs, timeout)
        if served is None:
            self.broken = True
        return served

    def kill(self) -> None:
        """Stop it at once (a cancel); it serves nothing more."""
        self.broken = True
        self.channel.kill()

    def close(self) -> None:
        """End it (the pool's end or a broken boot); idempotent."""
        self.broken = True
        self.channel.close()


def ran(served: Served, timeout: float, t0: float) -> tuple[RunResult, bytes]:
    """A served run as the runners' result: how it ended, and its stdout (the frame; none after a timeout)."""
    duration = time.monotonic() - t0
    if served.timed_out:
        return RunResult(None, True, killed_at_timeout(served.output, timeout), duration), b""
    return RunResult(served.exit_code, False, served.output, duration), served.stdout
