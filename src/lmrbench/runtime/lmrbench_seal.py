"""pytest plugin run inside the sandbox (stdlib + pytest only): junit report to $LMRBENCH_OUT, sealed.

The harness writes a random key into ``$LMRBENCH_HARNESS/lmrbench_key`` and starts pytest with
``-p lmrbench_seal``. pytest imports ``-p`` plugins before any conftest or test module, so this
module reads the key and deletes the file before code under test runs. At the very end of the session,
after the junit plugin has written its file, it writes ``seal.json``: the exit status, the path and hash of
every conftest.py pytest loaded, and an HMAC of those and the junit bytes.

The harness accepts a report only with a valid seal whose conftests are, byte for byte, files of the
evaluated tree. With ``$LMRBENCH_WATCH_READS`` set (validate's golden runs) it also lists, in ``reads.json``,
the files of the repository the test process opened: the data the tests read, which is then trusted.

So a candidate that writes its own report and ends the process early (``os._exit(0)``, a
signal) is detected, and so is a report rewritten after the seal, or a conftest.py the candidate wrote to
change outcomes. What a seal cannot stop is code that deliberately subverts this process (the key lives
in its memory): the tests run in the candidate's process; the seal raises the bar from writing a file to
attacking the harness, which the judge and reviewers see in the candidate's code.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys

import pytest
from lmrbench_protocol import ENV_HARNESS, ENV_OUT, ENV_WATCH_READS, READS_NAME, seal_digest, watch_reads

KEY_FILE = "lmrbench_key"
JUNIT_NAME = "junit.xml"
SEAL_NAME = "seal.json"


def _take_key() -> bytes:
    harness = os.environ.get(ENV_HARNESS)
    if not harness:
        return b""
    path = os.path.join(harness, KEY_FILE)
    try:
        with open(path, "rb") as fh:
            key = fh.read()
        os.unlink(path)
    except OSError:
        return b""
    return key


def _make_hooks(key: bytes) -> tuple[object, object, object]:
    out = os.environ.get(ENV_OUT, "")
    root = os.getcwd()
    conftests: dict[str, str] = {}
    reads = watch_reads(root) if os.environ.get(ENV_WATCH_READS) else None

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(config: pytest.Config) -> None:
        if out:
            config.option.xmlpath = os.path.join(out, JUNIT_NAME)

    def pytest_plugin_registered(plugin: object) -> None:
        path = str(getattr(plugin, "__file__", "") or "")
        if os.path.basename(path) != "conftest.py":
            return
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        try:
            with open(path, "rb") as fh:
                conftests[rel] = hashlib.sha256(fh.read()).hexdigest()
        except OSError:
            conftests[rel] = "unreadable"

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
        if out and reads is not None:
            goal_reads: set[str] = getattr(sys.modules.get("lmrbench_proxy"), "GOAL_READS", set())
            with open(os.path.join(out, READS_NAME), "w") as fh:
                json.dump(sorted(reads - goal_reads), fh)
        if not out or not key:
            return
        try:
            with open(os.path.join(out, JUNIT_NAME), "rb") as fh:
                junit = fh.read()
        except OSError:
            return
        seal = {
            "exitstatus": int(exitstatus),
            "conftests": dict(conftests),
            "hmac": seal_digest(key, junit, int(exitstatus), dict(conftests)),
        }
        with open(os.path.join(out, SEAL_NAME), "w") as fh:
            json.dump(seal, fh)

    return pytest_configure, pytest_plugin_registered, pytest_sessionfinish


pytest_configure, pytest_plugin_registered, pytest_sessionfinish = _make_hooks(_take_key())
