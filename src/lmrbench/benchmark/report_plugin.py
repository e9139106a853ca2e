"""pytest plugin run inside the sandbox (stdlib + pytest only): junit report to $LMRBENCH_OUT, sealed.

The harness writes a random key into ``$LMRBENCH_HARNESS/lmrbench_key`` and starts pytest with ``-p
lmrbench_report_plugin``. pytest imports ``-p`` plugins before any conftest or test module, so this module
reads the key and deletes the file before code under test runs. At the very end of the session, after the
junit plugin has written its file, it writes ``seal.json``: the exit status and an HMAC of the junit bytes
and that status. The harness accepts a report only with a valid seal, so a candidate that writes its own
report file and then ends the process (``os._exit(0)``, a signal) before the session ends is detected, and
so is a report rewritten after the seal. What a seal cannot stop is code that deliberately subverts this
process's memory (the key lives there): the tests run in the candidate's process; the seal raises the bar
from writing a file to attacking the harness, which the judge and reviewers see in the candidate's code.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os

import pytest

KEY_FILE = "lmrbench_key"
JUNIT_NAME = "junit.xml"
SEAL_NAME = "seal.json"


def _take_key() -> bytes:
    harness = os.environ.get("LMRBENCH_HARNESS")
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


def seal_digest(key: bytes, junit: bytes, exitstatus: int) -> str:
    """The HMAC the harness recomputes."""
    return hmac.new(key, junit + b"\0" + str(int(exitstatus)).encode(), hashlib.sha256).hexdigest()


def _make_hooks(key: bytes) -> tuple[object, object]:
    out = os.environ.get("LMRBENCH_OUT", "")

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(config: pytest.Config) -> None:
        if out:
            config.option.xmlpath = os.path.join(out, JUNIT_NAME)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
        if not out or not key:
            return
        try:
            with open(os.path.join(out, JUNIT_NAME), "rb") as fh:
                junit = fh.read()
        except OSError:
            return
        seal = {"exitstatus": int(exitstatus), "hmac": seal_digest(key, junit, int(exitstatus))}
        with open(os.path.join(out, SEAL_NAME), "w") as fh:
            json.dump(seal, fh)

    return pytest_configure, pytest_sessionfinish


pytest_configure, pytest_sessionfinish = _make_hooks(_take_key())
