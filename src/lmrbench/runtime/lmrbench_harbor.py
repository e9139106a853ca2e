"""Grade an agent's goal files in a Harbor verifier: lmrbench's split run, decided as ``lmrbench evaluate`` decides.

Shipped into an exported Harbor task's ``tests/`` (``lmrbench task export --harbor``), where lmrbench is not
installed, and run by ``tests/test.sh`` as root in Harbor's separate verifier container, whose
``/workspace/<repo>`` is the task's pristine agent view with only the goal files taken from the agent's container
(task.toml's ``artifacts``). Beside it: ``run.json`` (the boot's spec, the ids the tests declare, the run's key,
the conftest.py files the tests may load, where each goal file goes), ``payload.bin`` (the trusted tree with the
tests and recorded data, the harness, the candidate's view without its goal files: all decided at export) and
``lmrbench_boot.py`` (the boot's ``-c`` source). This script adds the agent's goal files to the candidate's tree,
runs the boot, reads the sealed junit report from its closing frame and writes:

- ``<verifier dir>/verdict.json``: status (passed, failed, error, timeout, infra_error), detail, the cases;
- ``<verifier dir>/reward.txt``: ``1`` when every test the task declares passed, else ``0`` (lmrbench's verdict
  is all or nothing; the fraction of cases passed is in verdict.json), never for an infrastructure error (no
  reward file then: Harbor records the trial as an error, not as a wrong answer).

Standard library only, and ``lmrbench_protocol`` beside it. Usage: ``python3 -I lmrbench_harbor.py TESTS_DIR
VERIFIER_DIR``.
"""

import base64
import hashlib
import hmac
import json
import os
import shutil
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lmrbench_protocol import END, INFRA_MARK, OUT_MARK, seal_digest  # noqa: E402

MAX_GOAL = 2_000_000
"""Largest goal file read from the agent's work (as ``lmrbench evaluate``)."""
GRACE = 60
"""Seconds past the boot's own deadline after which the grader kills it."""
JUNIT, SEAL = "out/junit.xml", "out/seal.json"


class Infra(Exception):
    """The run could not be made or read: no verdict on the answer."""


def _entry(kind, mode, name, data):
    raw = name.encode("utf-8", "surrogateescape")
    return b"%s %o %d %d\n" % (kind, mode, len(raw), len(data)) + raw + data


def goal_bytes(path):
    """The agent's goal file: a regular file (no link), at most MAX_GOAL bytes; None when there is none."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{path} is not a regular file")
    if st.st_size > MAX_GOAL:
        raise ValueError(f"{path} is larger than {MAX_GOAL} bytes")
    with open(path, "rb") as fh:
        return fh.read(MAX_GOAL + 1)


def out_files(frame):
    """(exit status, {name: bytes}) of the boot's closing frame on stdout; Infra when there is none."""
    if frame.startswith(INFRA_MARK):
        raise Infra(frame[len(INFRA_MARK):].decode("utf-8", "replace").strip())
    at = frame.rfind(OUT_MARK)
    if at < 0:
        raise Infra("the run ended without its closing frame")
    header, _, rest = frame[at + len(OUT_MARK):].partition(b"\n")
    try:
        code, n, _m = (int(x) for x in header.split()[:3])
        data = base64.b64decode(rest[:n])
    except ValueError:
        raise Infra("the closing frame cannot be read") from None
    files, pos = {}, 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        if end < 0 or data[pos:end + 1] == END:
            break
        try:
            kind, _mode, n_text, size_text = data[pos:end].split()
            n, size = int(n_text), int(size_text)
        except ValueError:
            raise Infra("the out folder cannot be read") from None
        name, body = data[end + 1:end + 1 + n].decode("utf-8", "replace"), data[end + 1 + n:end + 1 + n + size]
        pos = end + 1 + n + size
        if kind == b"f":
            files[name] = body
    return code, files


def cases_of(junit):
    """[(test id, outcome)] of a junit report (ids as lmrbench spells them: ``<classname>::<name>``)."""
    root = ET.fromstring(junit)
    if root.tag not in ("testsuites", "testsuite"):
        raise ValueError(f"junit report has root <{root.tag}>")
    out = []
    for case in root.iter("testcase"):
        outcome = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                if outcome != "skipped":
                    break
        cls, name = case.get("classname", ""), case.get("name", "")
        out.append((f"{cls}::{name}" if cls else name, outcome))
    return out


def _matches(expected, case_id):
    return case_id == expected or case_id.startswith(expected + "[")


def decide(code, files, plan):
    """(status, detail, cases) of a finished run, as lmrbench's ``pytest_run.decide``."""
    junit, seal = files.get(JUNIT), files.get(SEAL)
    if junit is None:
        return "error", f"no test report: pytest ended before writing it (exit {code})", []
    key = bytes.fromhex(plan["key"])
    try:
        sealed = json.loads(seal or b"")
        exitstatus, conftests = int(sealed["exitstatus"]), dict(sealed["conftests"])
        valid = hmac.compare_digest(str(sealed["hmac"]), seal_digest(key, junit, exitstatus, conftests))
    except (ValueError, KeyError, TypeError):
        valid = False
    if not valid:
        return "error", "the test report is not sealed by this run", []
    foreign = sorted(rel for rel, digest in conftests.items() if plan["conftests"].get(rel) != digest)
    if foreign:
        return "error", f"pytest loaded {foreign[0]}, a conftest.py that is not the task's own", []
    if exitstatus != code:
        return "error", f"pytest's exit status {exitstatus} differs from the process's {code}", []
    try:
        cases = cases_of(junit)
    except (ET.ParseError, ValueError) as exc:
        return "error", f"the junit report cannot be read: {exc}", []
    wanted = plan["expected_ids"] or [c for c, _ in cases]
    missing = [i for i in wanted if not any(_matches(i, c) for c, _ in cases)]
    failed = [c for c, o in cases if o == "failed"]
    errored = [c for c, o in cases if o == "error"]
    skipped = [c for c, o in cases if o == "skipped" and any(_matches(i, c) for i in wanted)]
    if not wanted:
        return "error", "the report holds no test case", cases
    if failed:
        return "failed", f"{len(failed) + len(errored)} of {len(cases)} cases failed, first {failed[0]}", cases
    if errored:
        return "error", f"{len(errored)} cases errored (collection or setup), first {errored[0]}", cases
    if missing:
        return "error", f"{len(missing)} expected tests are missing, first {missing[0]}", cases
    if skipped:
        return "failed", f"{len(skipped)} expected tests were skipped, first {skipped[0]}", cases
    if code != 0:
        return "error", f"pytest exited {code}", cases
    return "passed", "", cases


def run(tests, plan, digests):
    """Run the boot on the payload with the agent's goal files (their sha256 into ``digests``); (status, detail,
    cases, output)."""
    parts = [open(os.path.join(tests, "payload.bin"), "rb").read()]  # noqa: SIM115
    for arcname, source in sorted(plan["goals"].items()):
        try:
            data = goal_bytes(source)
        except (OSError, ValueError) as exc:
            return "failed", f"the goal file cannot be read: {exc}", [], ""
        if data is None:
            return "failed", f"the goal file {source} is missing", [], ""
        digests[source] = hashlib.sha256(data).hexdigest()
        parts.append(_entry(b"f", 0o644, arcname, data))
    parts.append(END)
    spec = plan["spec"]
    root = spec["root"]
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root, mode=0o711)
    boot = open(os.path.join(tests, "lmrbench_boot.py"), encoding="utf-8").read()  # noqa: SIM115
    flags = ["-I"] if spec.get("preload") else ["-I", "-S"]
    argv = ["python3", *flags, "-c", boot, plan["spec_hex"]]
    try:
        done = subprocess.run(argv, input=b"".join(parts), capture_output=True, timeout=spec["deadline"] + GRACE,
                              check=False)
    except subprocess.TimeoutExpired:
        return "timeout", f"killed after {spec['deadline'] + GRACE} s", [], ""
    finally:
        shutil.rmtree(root, ignore_errors=True)
    output = done.stderr.decode("utf-8", "replace")
    code, files = out_files(done.stdout)
    if code == 124 and JUNIT not in files:  # the boot's own deadline
        return "timeout", f"the tests ran past their {plan['timeout']:.0f} s timeout", [], output
    status, detail, cases = decide(code, files, plan)
    return status, detail, cases, output


def _write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def main(argv):
    tests, verifier = argv[1], argv[2]
    os.makedirs(verifier, exist_ok=True)
    os.chmod(verifier, 0o755)  # the run's two users cannot write the reward
    with open(os.path.join(tests, "run.json"), encoding="utf-8") as fh:
        plan = json.load(fh)
    digests = {}
    try:
        status, detail, cases, output = run(tests, plan, digests)
    except (Infra, OSError) as exc:
        status, detail, cases, output = "infra_error", str(exc), [], ""
    for name in ("reward.json", "reward.txt"):  # whatever a run's process left there is not the verdict
        path = os.path.join(verifier, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)
    passed = sum(1 for _, o in cases if o == "passed")
    verdict = {"status": status, "detail": detail, "passed": passed, "cases": len(cases),
               "fraction": passed / len(cases) if cases else 0.0, "task": plan["task"],
               "implementation": plan["implementation"], "case_outcomes": dict(cases),
               "goal_sha256": digests}
    _write(os.path.join(verifier, "verdict.json"), json.dumps(verdict, indent=2) + "\n")
    _write(os.path.join(verifier, "run.log"), output)
    print(f"lmrbench: {status}: {detail or 'every declared test passed'} ({passed} of {len(cases)} cases passed)")
    if status == "infra_error":
        return 1
    _write(os.path.join(verifier, "reward.txt"), "1\n" if status == "passed" else "0\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
