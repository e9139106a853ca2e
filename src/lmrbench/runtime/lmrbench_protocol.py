"""Names and limits of the process boundary, imported by both sides: lmrbench on the host, and the runtime
modules inside a sandbox (where it ships as this file, and the boot script runs with this source before its own).

Standard library only, nothing imported at module level: the boot script pays for every import.
"""

ENV_PREFIX = "LMRBENCH_"
"""Variables a task's own environment may not set (the harness's, below)."""
ENV_OUT = "LMRBENCH_OUT"
"""The trusted side's out folder: the sealed report, recordings; copied back to the host."""
ENV_HARNESS = "LMRBENCH_HARNESS"
"""The harness folder (plugins, the run's key, the codec), first on the Python path."""
ENV_CALL_FDS = "LMRBENCH_CALL_FDS"
"""``<read>,<write>``: the pipe ends of a split run's calls, on each side."""
ENV_GOALS = "LMRBENCH_GOALS"
"""JSON list of ``{"file", "qualname", "factory"}``: the goal functions the trusted side proxies."""
ENV_MAX_REPLY = "LMRBENCH_MAX_REPLY"
"""Largest reply the trusted side reads from the worker (bytes); ``MAX_REPLY`` when unset."""
ENV_RECORD_SPEC = "LMRBENCH_RECORD_SPEC"
"""JSON: what the recorder records (targets, limits); recording is on only when it is set."""
ENV_RECORD_ROOT = "LMRBENCH_RECORD_ROOT"
"""The repository root of a recorded command."""
ENV_EDITABLE = "LMRBENCH_EDITABLE"
"""Set by an image whose task's own Dockerfile installed repository folders with ``pip install -e``: those folders
(``:``-separated, relative to the run's working folder), which the image's ``.pth`` hook puts on the import path;
each side of a run keeps it from the image's environment."""
ENV_WATCH_READS = "LMRBENCH_WATCH_READS"
"""Set in a golden run: the trusted test process lists the repository files it opens in ``READS_NAME``."""
READS_NAME = "reads.json"
"""In the out folder: JSON list of the repository-relative files the trusted test process opened."""

UNCARRIED = "cannot cross to the candidate's process"
"""In the error a split run's proxy raises when a call's value is one the codec cannot carry: the golden code never
ran, and validation reports the value (not a golden failure)."""
UNREADABLE = "cannot be read back on the trusted side"
"""In the error a split run's proxy raises when the worker's reply to a call (its result, or the arguments and
instance it changed) holds a value the codec cannot decode: in a golden run the golden code ran, but what it gave
never reached the test, and validation reports the call and the error (a codec limit, not a golden failure)."""

MAX_REPLY = 256 << 20
"""Default cap of one reply from the worker."""
OUT_LIMIT = 64 << 20
"""Largest out folder the boot script packs and the host reads back."""
END = b"e 0 0 0\n"
"""The end of a payload, and of the out folder the boot script sends back."""
OUT_MARK = b"LMRBENCH-OUT "
"""Starts the boot script's closing frame: ``<exit> <n> <m>``, then the out folder and the worker's output."""
INFRA_MARK = b"LMRBENCH-INFRA "
"""Starts the boot script's line when it could not start the run (unpack, spawn)."""
RUN_MARK = b"LMRBENCH-RUN "
"""A warm boot's request on its stdin: ``<spec bytes> <payload bytes> <timeout ms>``, then the run's marshal'd
spec and its payload."""
DONE_MARK = b"LMRBENCH-DONE "
"""A warm boot's line on stdout after each run's frame: ``<nonce> <n> <exit> <timed out 0|1>``."""
ENDED_MARK = b"[lmrbench: run ended] "
"""A warm boot's line on stderr after each run's output: ``<nonce> <n>`` (a newline before it)."""


def seal_digest(key: bytes, junit: bytes, exitstatus: int, conftests: dict) -> str:
    """The HMAC over the junit bytes, pytest's exit status and the conftests it loaded: written by the seal
    plugin inside the sandbox, recomputed by the host."""
    import hashlib
    import hmac
    import json

    facts = json.dumps({"exitstatus": int(exitstatus), "conftests": conftests}, sort_keys=True)
    return hmac.new(key, junit + b"\0" + facts.encode(), hashlib.sha256).hexdigest()


MAX_READS = 5000
"""Most files one process lists in ``READS_NAME``."""
_CODE_SUFFIXES = (".py", ".pyc", ".pyi", ".so", ".pyd", ".pth")


def watch_reads(root: str) -> set:
    """Start listing the files under ``root`` this process opens for reading (Python modules left out), by an
    audit hook; returns the set it fills (repository-relative, ``/``-separated). For golden runs only."""
    import os
    import sys

    base = os.path.realpath(root) + os.sep
    seen: set = set()
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def hook(event, args):
        if event != "open" or len(args) < 3 or not isinstance(args[0], (str, bytes)) or len(seen) >= MAX_READS:
            return
        mode, flags = args[1], args[2]
        if (isinstance(mode, str) and any(c in mode for c in "wax+")) or (isinstance(flags, int) and flags & writing):
            return
        name = os.fsdecode(args[0])
        if name.endswith(_CODE_SUFFIXES):
            return
        full = os.path.realpath(os.path.join(base, name))
        if full.startswith(base) and os.path.isfile(full):
            seen.add(full[len(base):].replace(os.sep, "/"))

    sys.addaudithook(hook)
    return seen
