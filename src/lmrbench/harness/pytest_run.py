"""Run a task's pytest tests in a sandbox and decide the outcome from a sealed junit report.

Never from printed text: the status comes from the junit report (written to $LMRBENCH_OUT, read back by the
sandbox), its seal (see ``runtime/lmrbench_seal.py``: an HMAC with a per-run key that the code under test never sees on
disk), the test ids expected, and the exit status of pytest. A run that ends before pytest writes its report,
a report written by anyone else, or a report that disagrees with the exit status is an error, never a pass.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path

from lmrbench import jsonsafe
from lmrbench.core.sandbox import RunResult, Worker
from lmrbench.core.taskset import Task
from lmrbench.core.treeview import Tree, read_tree_file
from lmrbench.errors import LmrError
from lmrbench.fsutil import read_capped
from lmrbench.harness.evidence import Evidence, record_run, start_run
from lmrbench.harness.junit import parse_junit
from lmrbench.harness.request import RunRequest, SandboxRequest
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.split import id_matches
from lmrbench.harness.tagged import TaggedVariant
from lmrbench.runtime import PROTOCOL, PROXY_PLUGIN, SEAL_PLUGIN, runtime_files, trusted_split_files
from lmrbench.runtime.lmrbench_protocol import ENV_WATCH_READS as WATCH_READS
from lmrbench.runtime.lmrbench_protocol import READS_NAME, seal_digest
from lmrbench.schemas.testrun import TestCaseResult, TestReport, TestStatus

PLUGIN_MODULE = SEAL_PLUGIN
KEY_FILE = "lmrbench_key"
JUNIT_NAME = "junit.xml"
SEAL_NAME = "seal.json"
LOG_TAIL_CHARS = 4000
MAX_JUNIT = 16 << 20
"""Largest junit report read back."""
_PYTEST_EXIT = {
    2: "interrupted (collection errors?)",
    3: "internal error",
    4: "usage error",
    5: "no tests collected",
}


def tree_digests(tree: Tree, paths: list[str]) -> dict[str, str | None]:
    """sha256 of each path as ``tree`` holds it (None: not a file of it; a ``../`` path never is)."""
    out: dict[str, str | None] = {}
    for rel in paths:
        data = None if rel.startswith("../") else read_tree_file(tree, rel)
        out[rel] = None if data is None else hashlib.sha256(data).hexdigest()
    return out


def read_seal(seal: bytes | None, key: bytes, junit: bytes | None) -> tuple[bool, int, dict[str, str]]:
    """(whether ``seal`` seals ``junit`` with ``key``, pytest's exit status, the conftest.py files it loaded with
    their sha256); (False, -1, {}) when it is not a seal of them."""
    if junit is None:
        return False, -1, {}
    try:
        sealed = jsonsafe.loads(seal or b"")
        exitstatus = int(sealed["exitstatus"])
        conftests = {str(k): str(v) for k, v in dict(sealed["conftests"]).items()}
        if hmac.compare_digest(str(sealed["hmac"]), seal_digest(key, junit, exitstatus, conftests)):
            return True, exitstatus, conftests
    except (ValueError, KeyError, TypeError):
        pass
    return False, -1, {}


def _foreign_conftest(held: Mapping[str, str | None], loaded: dict[str, str]) -> str | None:
    """The first loaded conftest.py that is not, byte for byte, a file of the evaluated tree (``held``: its
    digests, see ``tree_digests``)."""
    return next((rel for rel, digest in sorted(loaded.items()) if held.get(rel) != digest), None)


def pytest_argv(test_files: list[str], *, split: bool = False) -> list[str]:
    """The command a sandbox runs (working dir: the repo copy); a split run loads the proxy first."""
    return [
        "python",
        "-m",
        "pytest",
        "-p",
        PLUGIN_MODULE,
        *(["-p", PROXY_PLUGIN] if split else []),
        "-p",
        "no:cacheprovider",
        "-q",
        "--tb=short",
        *test_files,
    ]


def harness_files(key: bytes, *, split: bool = False) -> dict[str, bytes]:
    """The plugin and the run's key (and for a split run the proxy), placed in $LMRBENCH_HARNESS."""
    files = {**runtime_files((f"{PLUGIN_MODULE}.py", PROTOCOL)), KEY_FILE: key}
    return {**files, **trusted_split_files()} if split else files


def pytest_request(task: Task, tree: Tree, test_files: list[str], timeout: float, *,
                   expected_ids: list[str] | None = None, env: dict[str, str] | None = None,
                   worker: Worker | None = None, variant: TaggedVariant | None = None,
                   preload: tuple[str, ...] = ()) -> RunRequest:
    """The pytest command of ``test_files`` (relative to the repository) on a copy of ``tree``, with a fresh seal
    key; with a worker (a split run) the goal functions run in the worker's process, and ``env`` names them."""
    key = secrets.token_bytes(32)
    split = worker is not None
    command = SandboxRequest(task, tree, pytest_argv(test_files, split=split), timeout, dict(env or {}),
                             harness_files(key, split=split), worker, variant, tuple(preload))
    return RunRequest(command, "pytest", list(test_files), expected_ids, key)


def run_pytest(sandbox: Sandbox, request: RunRequest, cancel: threading.Event | None = None,
               evidence: Evidence | None = None) -> TestReport:
    """Run the request's command and decide the status from its sealed junit report. ``evidence``: where the
    run's spec (written before it starts), reports and whole output are recorded."""
    command, key = request.command, request.key
    spec = start_run(evidence, request, sandbox.name)
    with tempfile.TemporaryDirectory(prefix="lmrbench-out-") as out:
        res = sandbox.run(command, Path(out), cancel)
        junit = _read(Path(out) / JUNIT_NAME, MAX_JUNIT)
        seal = _read(Path(out) / SEAL_NAME, 1 << 20)
        reads = _read(Path(out) / READS_NAME, 4 << 20) if command.env.get(WATCH_READS) else None
    valid, _, loaded = read_seal(seal, key, junit)
    held = tree_digests(command.tree, sorted(loaded)) if valid else {}  # only paths pytest's own session named
    spec = spec.model_copy(update={"conftests": held})
    record_run(evidence, spec, res, {JUNIT_NAME: junit, SEAL_NAME: seal, READS_NAME: reads})
    report = decide(res, junit, seal, key, request.expected_ids, sandbox=sandbox.name, held=held)
    return with_reads(report, reads)


def with_reads(report: TestReport, reads: bytes | None) -> TestReport:
    """``report`` with the files its run's reads.json lists (unchanged when the run kept none)."""
    return report.model_copy(update={"read_files": _read_list(reads)}) if reads is not None else report


def _read_list(raw: bytes) -> list[str]:
    """The paths of reads.json ([] when it is not a list of strings)."""
    try:
        data = jsonsafe.loads(raw)
    except ValueError:
        return []
    return sorted({p for p in data if isinstance(p, str)}) if isinstance(data, list) else []


def _read(path: Path, limit: int) -> bytes | None:
    try:
        return read_capped(path, limit)
    except LmrError:
        return None


def decide(
    res: RunResult,
    junit: bytes | None,
    seal: bytes | None,
    key: bytes,
    expected_ids: list[str] | None,
    *,
    sandbox: str,
    tree: Tree | None = None,
    held: Mapping[str, str | None] | None = None,
) -> TestReport:
    """The TestReport of a finished run, from its result, report bytes, seal and the ids expected.

    With ``tree`` (the evaluated tree) or ``held`` (its digests, see ``tree_digests``), every conftest.py
    pytest loaded must be a file of it, unchanged.
    """
    base = {
        "exit_code": res.exit_code,
        "duration": round(res.duration, 3),
        "sandbox": sandbox,
        "log_tail": res.log_tail(LOG_TAIL_CHARS),
        "log": res.full_log(),
        "expected_ids": list(expected_ids or []),
    }

    def report(
        status: TestStatus,
        detail: str,
        cases: list[TestCaseResult] | None = None,
        missing: list[str] | None = None,
    ) -> TestReport:
        return TestReport(status=status, detail=detail, cases=cases or [], missing_ids=missing or [], **base)

    if res.infra_error:
        return report(TestStatus.INFRA_ERROR, res.infra_error)
    if res.timed_out:
        return report(TestStatus.TIMEOUT, f"killed after the {res.duration:.0f} s timeout")
    if junit is None:
        return report(
            TestStatus.ERROR, f"no test report: pytest ended before writing it (exit {res.exit_code})"
        )
    valid, exitstatus, conftests = read_seal(seal, key, junit)
    if not valid:
        return report(
            TestStatus.ERROR,
            "the test report is not sealed by this run: it was written or changed "
            f"outside pytest's session, or the session never ended (exit {res.exit_code})",
        )
    if held is None and tree is not None:
        held = tree_digests(tree, sorted(conftests))
    foreign = _foreign_conftest(held, conftests) if held is not None else None
    if foreign:
        return report(TestStatus.ERROR, f"pytest loaded {foreign}, a conftest.py that is not the task's own")
    if exitstatus != res.exit_code:
        return report(
            TestStatus.ERROR,
            f"pytest's exit status {exitstatus} differs from the process's "
            f"{res.exit_code}: the process ended after its session in an unexpected way",
        )
    try:
        cases = parse_junit(junit)
    except ValueError as exc:
        return report(TestStatus.ERROR, str(exc))
    wanted = list(expected_ids) if expected_ids else [c.test_id for c in cases]
    missing = [i for i in wanted if not any(id_matches(i, c.test_id) for c in cases)]
    bad = [c for c in cases if c.outcome in ("failed", "error")]
    skipped = [c.test_id for c in cases if c.outcome == "skipped" and any(id_matches(i, c.test_id) for i in wanted)]
    if not wanted:
        return report(TestStatus.ERROR, "the report holds no test case", cases)
    if any(c.outcome == "failed" for c in bad):
        first = next(c for c in bad if c.outcome == "failed")
        return report(
            TestStatus.FAILED,
            f"{len(bad)} of {len(cases)} cases failed, first {first.test_id}",
            cases,
            missing,
        )
    if bad:
        return report(
            TestStatus.ERROR,
            f"{len(bad)} cases errored (collection or setup), first {bad[0].test_id}",
            cases,
            missing,
        )
    if missing:
        return report(
            TestStatus.ERROR, f"{len(missing)} expected tests are missing, first {missing[0]}", cases, missing
        )
    if skipped:
        return report(
            TestStatus.FAILED, f"{len(skipped)} expected tests were skipped, first {skipped[0]}", cases
        )
    if res.exit_code != 0:
        why = _PYTEST_EXIT.get(res.exit_code or 0, "non-zero exit")
        return report(TestStatus.ERROR, f"pytest exited {res.exit_code}: {why}", cases)
    return report(TestStatus.PASSED, "", cases)
