"""Official LMR-Bench script-style tests, run in a legacy mode and reported as weaker evidence.

Official test scripts log "Test Passed" / "Test Failed" into ``unit_test/logs/<name>.log`` and often exit 0
when the numbers do not match. Here each script runs in its own child process with a fresh, harness-owned logs
folder; a script passes only when it finished normally (a wrapper around it reports its end through a pipe,
so ``os._exit`` or a killed process never passes), exited 0, printed no traceback, and left a log that says
"Passed" and never "Failed" (the official statistics rule).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import tempfile
import threading
from pathlib import Path

from lmrbench.core.sandbox import RunResult, Worker
from lmrbench.core.taskset import Task
from lmrbench.core.treeview import Tree
from lmrbench.errors import LmrError
from lmrbench.fsutil import read_capped
from lmrbench.harness.evidence import Evidence, record_run, start_run
from lmrbench.harness.request import RunRequest, SandboxRequest
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.tagged import TaggedVariant
from lmrbench.runtime import PROTOCOL, runtime_files, trusted_split_files
from lmrbench.runtime.lmrbench_wire import loads_bounded
from lmrbench.schemas.testrun import TestCaseResult, TestReport, TestStatus

LEGACY_MARKERS = ("Test Passed", "Test Failed")
"""Text whose presence makes a test file an official script-style test."""
RESULT_FILE = "legacy.json"
KEY_FILE = "lmrbench_legacy_key"
"""The harness file holding the seal key; the driver deletes it before any test code runs."""
"""What the driver writes into $LMRBENCH_OUT."""
TRACEBACK = "Traceback (most recent call last)"
_MAX_TAIL = 4000

# The child wrapper: runs one script as __main__ and reports through a pipe that it got to the end.
_WRAPPER = r"""
import os, runpy, sys, traceback
fd, path = int(sys.argv[1]), sys.argv[2]
sys.argv = [path]
sys.path[0] = os.path.dirname(os.path.abspath(path))
from lmrbench_protocol import ENV_CALL_FDS, ENV_WATCH_READS, watch_reads
if os.environ.get(ENV_CALL_FDS):
    import lmrbench_proxy  # a split run: the goal functions run in the candidate's process
reads = watch_reads(os.getcwd()) if os.environ.get(ENV_WATCH_READS) else set()  # a golden run: the data it reads
code = 0
try:
    runpy.run_path(path, run_name="__main__")
except SystemExit as exc:  # unittest.main() ends this way; in a split run the candidate cannot raise it here
    c = exc.code
    code = c if isinstance(c, int) else (0 if c is None else 1)
    if not isinstance(c, int) and c is not None:
        print(c, file=sys.stderr)
except BaseException:
    traceback.print_exc()
    code = 1
sys.stdout.flush(); sys.stderr.flush()
reads -= getattr(sys.modules.get("lmrbench_proxy"), "GOAL_READS", set())  # the goal code's own inputs
os.write(fd, ("finished %d\n" % code).encode() + "\n".join(sorted(reads)).encode("utf-8", "replace"))
os.close(fd)
os._exit(code)
"""

# The driver: takes the harness key (deleted before any test code runs), runs every script in turn in a
# child process that never sees the key or $LMRBENCH_OUT, then writes what it saw, sealed, to legacy.json.
_DRIVER = r"""
import hashlib, hmac, json, os, shutil, subprocess, sys, tempfile, time
from lmrbench_protocol import ENV_CALL_FDS, ENV_HARNESS, ENV_OUT
out = os.environ.pop(ENV_OUT, None)
key_path = os.path.join(os.environ.get(ENV_HARNESS, ""), "lmrbench_legacy_key")
try:
    with open(key_path, "rb") as fh:
        key = fh.read()
    os.unlink(key_path)
except OSError:
    key = b""
wrapper = sys.argv[1]
calls = tuple(int(x) for x in os.environ.get(ENV_CALL_FDS, "").split(",") if x)
env = dict(os.environ)
env["PYTHONPATH"] = os.pathsep.join(p for p in (os.getcwd(), env.get("PYTHONPATH", "")) if p)
results = []
scratch = tempfile.mkdtemp(prefix="lmrbench-legacy-")
for k, script in enumerate(sys.argv[2:]):
    stem = os.path.splitext(os.path.basename(script))[0]
    logs = os.path.join(os.path.dirname(script), "logs")
    shutil.rmtree(logs, ignore_errors=True)
    if os.path.lexists(logs):
        os.unlink(logs)
    os.makedirs(logs)
    r, w = os.pipe()
    log_path = os.path.join(scratch, "out-%d.txt" % k)
    start = time.monotonic()
    with open(log_path, "wb") as fh:
        proc = subprocess.Popen([sys.executable, "-c", wrapper, str(w), script], stdin=subprocess.DEVNULL,
                                stdout=fh, stderr=subprocess.STDOUT, pass_fds=(w, *calls), env=env)
        os.close(w)
        code = proc.wait()
    os.set_blocking(r, False)
    said = b""
    try:
        while len(said) < 1 << 20:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            said += chunk
    except BlockingIOError:
        pass
    os.close(r)
    signal, _, read_list = said.decode("utf-8", "replace").partition("\n")
    with open(log_path, "rb") as fh:
        output = fh.read()[-20000:].decode("utf-8", "replace")
    sys.stdout.write(output)
    found = {}
    if os.path.isdir(logs) and not os.path.islink(logs):
        for name in sorted(os.listdir(logs)):
            p = os.path.join(logs, name)
            if name.endswith(".log") and os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as fh:
                    found[name] = fh.read(65536).decode("utf-8", "replace")
    results.append({"script": script, "stem": stem, "exit_code": code, "finished": signal,
                    "output": output[-4000:], "logs": found, "duration": time.monotonic() - start,
                    "reads": [p for p in read_list.split("\n") if p]})
if out and key:
    payload = json.dumps({"results": results})
    seal = hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()
    tmp = os.path.join(out, ".legacy.json.tmp")
    with open(tmp, "w") as fh:
        json.dump({"payload": payload, "hmac": seal}, fh)
    os.replace(tmp, os.path.join(out, "legacy.json"))
"""


def is_legacy_test(path: Path) -> bool:
    """True when the test file is an official script-style test (it logs "Test Passed"/"Test Failed")."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(m in text for m in LEGACY_MARKERS)


def unseal(raw: bytes | None, key: bytes) -> list[dict[str, object]] | None:
    """The driver's per-script entries when the result file carries a valid seal, else None."""
    if not raw:
        return None
    try:
        data = loads_bounded(raw.decode("utf-8"))
        payload, seal = data["payload"], data["hmac"]
        if not isinstance(payload, str) or not isinstance(seal, str):
            return None
        if not hmac.compare_digest(hmac.new(key, payload.encode(), hashlib.sha256).hexdigest(), seal):
            return None
        entries = loads_bounded(payload)["results"]
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else None


def judge_script(entry: dict[str, object]) -> TestCaseResult:
    """The outcome of one script from what the driver recorded about it."""
    script = str(entry.get("script", "?"))
    stem = str(entry.get("stem", ""))
    code = entry.get("exit_code")
    finished = str(entry.get("finished", ""))
    output = str(entry.get("output", ""))
    logs = entry.get("logs") if isinstance(entry.get("logs"), dict) else {}
    assert isinstance(logs, dict)
    duration = float(entry.get("duration", 0.0) or 0.0)  # type: ignore[arg-type]

    def result(outcome: str, message: str) -> TestCaseResult:
        return TestCaseResult(test_id=script, outcome=outcome, duration=duration, message=message)  # type: ignore[arg-type]

    if not finished.startswith("finished "):
        return result("error", f"the script ended before finishing (exit code {code}); os._exit or killed?")
    if code != 0:
        return result("failed", f"exit code {code}")
    log = logs.get(f"{stem}.log")
    if log is None and len(logs) == 1:
        log = next(iter(logs.values()))
    if log is None:
        return result("failed", f"no log file unit_test/logs/{stem}.log was written")
    if TRACEBACK in output or TRACEBACK in str(log):
        return result("failed", "a traceback was printed")
    if "Failed" in str(log):
        return result("failed", "the log says Failed")
    if "Passed" not in str(log):
        return result("failed", "the log never says Passed")
    return result("passed", "")


def _strings(value: object) -> list[str]:
    """The strings of a list read back from the driver ([] for anything else)."""
    return [p for p in value if isinstance(p, str)] if isinstance(value, list) else []


def legacy_request(task: Task, tree: Tree, test_files: list[str], timeout: float, *,
                   env: dict[str, str] | None = None, worker: Worker | None = None,
                   variant: TaggedVariant | None = None, preload: tuple[str, ...] = ()) -> RunRequest:
    """The command that runs the official script-style ``test_files`` on a copy of ``tree`` under the driver,
    with a fresh seal key; with a worker (a split run) the goal functions run in the worker's process, so
    nothing the candidate does can write the logs, print into the scripts' output or end a script early."""
    key = secrets.token_hex(32).encode()
    files = {KEY_FILE: key, **runtime_files((PROTOCOL,)), **(trusted_split_files() if worker else {})}
    argv = ["python", "-c", _DRIVER, _WRAPPER, *test_files]
    command = SandboxRequest(task, tree, argv, timeout, dict(env or {}), files, worker, variant, tuple(preload))
    return RunRequest(command, "legacy", list(test_files), None, key)


def run_legacy(sandbox: Sandbox, request: RunRequest, cancel: threading.Event | None = None,
               evidence: Evidence | None = None) -> TestReport:
    """Run the request's official script-style tests and decide from their logs, exit codes and endings.
    ``evidence``: where the run's spec (written before it starts), sealed result and whole output are
    recorded."""
    spec = start_run(evidence, request, sandbox.name)
    with tempfile.TemporaryDirectory(prefix="lmrbench-legacy-out-") as out:
        run = sandbox.run(request.command, Path(out), cancel)
        try:
            raw: bytes | None = read_capped(Path(out) / RESULT_FILE, 5_000_000)
        except LmrError:
            raw = None
    record_run(evidence, spec, run, {RESULT_FILE: raw})
    return decide_legacy(run, raw, request.key, request.test_files, sandbox=sandbox.name,
                         timeout=request.command.timeout)


def decide_legacy(run: RunResult, raw: bytes | None, key: bytes, test_files: list[str], *, sandbox: str,
                  timeout: float) -> TestReport:
    """The TestReport of a finished legacy run, from how it ended and the driver's sealed result ``raw``."""

    def report(status: TestStatus, cases: list[TestCaseResult], missing: list[str], why: str) -> TestReport:
        return TestReport(
            status=status,
            cases=cases,
            expected_ids=list(test_files),
            missing_ids=missing,
            exit_code=run.exit_code,
            duration=run.duration,
            log_tail=run.log_tail(_MAX_TAIL),
            log=run.full_log(),
            sandbox=sandbox,  # type: ignore[arg-type]
            evidence="legacy",
            detail=why,
            read_files=reads,
        )

    reads: list[str] = []
    if run.infra_error:
        return report(TestStatus.INFRA_ERROR, [], list(test_files), run.infra_error)
    if run.timed_out:
        return report(TestStatus.TIMEOUT, [], list(test_files), f"timed out after {timeout:g} s")
    entries = unseal(raw, key)
    if entries is None:
        detail = f"the legacy driver left no sealed result (exit code {run.exit_code})"
        return report(TestStatus.ERROR, [], list(test_files), detail)
    cases = [judge_script(e) for e in entries]
    reads = sorted({p for e in entries for p in _strings(e.get("reads"))})
    seen = {c.test_id for c in cases}
    missing = [f for f in test_files if f not in seen]
    cases = [c for c in cases if c.test_id in test_files]
    if run.exit_code != 0 or missing:
        detail = f"the legacy driver exited with {run.exit_code}" if run.exit_code != 0 else "scripts not run"
        return report(TestStatus.ERROR, cases, missing, detail)
    ok = all(c.outcome == "passed" for c in cases)
    failing = [f"{c.test_id}: {c.message}" for c in cases if c.outcome != "passed"]
    why = "; ".join(failing)[:500] if failing else "decided from the official scripts' logs (weaker evidence)"
    return report(TestStatus.PASSED if ok else TestStatus.FAILED, cases, [], why)
