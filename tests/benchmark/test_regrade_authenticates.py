"""regrade authenticates: the key that seals a run's reports is kept outside the run folder, so an edited report,
a re-sealed forgery and an edited record of how a run ended are named, and an auditor checks them with a copy of
the machine's key."""

from __future__ import annotations

import json
import secrets
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.run_task import GOAL, REPO, summing_agent_run
from lmrbench.benchmark.execution.sandboxes import get_sandbox
from lmrbench.benchmark.pipeline.evaluate import evaluate
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.cli.main import app
from lmrbench.core.taskset import load_taskset
from lmrbench.defaults import data_root
from lmrbench.runtime.lmrbench_protocol import seal_digest


@pytest.fixture
def failing_run(tmp_path: Path) -> RunDir:
    """Task 2-Async whose agent wrote a wrong ``total``, evaluated: failed, with its evidence."""
    run = RunDir(summing_agent_run(tmp_path))
    sandbox = get_sandbox("local", untrusted=True)
    graded = run.candidate_dir("2-Async", 1) / REPO / GOAL
    graded.write_text(graded.read_text().replace("return sum(xs)", "return 0"))
    tasks, _ = load_taskset(tmp_path / "bench", only=["2"])
    assert evaluate(tasks, run.path, sandbox, timeout=120).statuses == {"failed": 1}
    return run


def regrade(run: RunDir, *extra: str) -> tuple[int, str]:
    out = CliRunner().invoke(app, ["regrade", str(run.path), *extra])
    return out.exit_code, " ".join(out.output.split()) + (str(out.exception) if out.exit_code not in (0, 1) else "")


def _passing_junit(junit: bytes) -> bytes:
    text = junit.decode()
    start = text.index("<failure")
    end = text.index("</failure>") + len("</failure>")
    return (text[:start] + text[end:]).replace('failures="1"', 'failures="0"').encode()


def test_no_run_folder_holds_the_seal_key(failing_run: RunDir) -> None:
    spec = json.loads((failing_run.evidence_dir("2-Async", 1) / "run-1" / "spec.json").read_text())
    assert spec["key"] == "" and spec["wrapped_key"] and spec["auth"]
    key = (data_root() / "seal.key").read_bytes()
    assert not any(key.hex() in p.read_text(errors="replace") for p in failing_run.path.rglob("*") if p.is_file())
    assert regrade(failing_run)[0] == 0


def test_an_edited_junit_of_a_failing_run_is_named(failing_run: RunDir) -> None:
    junit = failing_run.evidence_dir("2-Async", 1) / "run-1" / "junit.xml"
    junit.write_bytes(_passing_junit(junit.read_bytes()))
    code, out = regrade(failing_run)
    assert code == 1 and "not sealed: 2-Async#1: run-1/junit.xml" in out
    assert "regraded 0/1 results" in out  # named, and not derived again
    assert "every verdict is the same" not in out


def test_a_resealed_forgery_with_a_key_of_the_forgers_own_is_named(failing_run: RunDir) -> None:
    folder = failing_run.evidence_dir("2-Async", 1)
    run1 = folder / "run-1"
    spec = json.loads((run1 / "spec.json").read_text())
    forged = _passing_junit((run1 / "junit.xml").read_bytes())
    key = secrets.token_bytes(32)  # the forger's key, put where the old evidence kept the run's
    seal = json.loads((run1 / "seal.json").read_text())
    seal["hmac"] = seal_digest(key, forged, seal["exitstatus"], seal["conftests"])
    (run1 / "junit.xml").write_bytes(forged)
    (run1 / "seal.json").write_text(json.dumps(seal))
    (run1 / "spec.json").write_text(json.dumps({**spec, "key": key.hex(), "wrapped_key": "", "nonce": ""}))
    result = failing_run.result_path("2-Async", 1)
    data = json.loads(result.read_text())
    result.write_text(json.dumps({**data, "status": "passed", "test_status": "passed", "reason": ""}))
    code, out = regrade(failing_run)
    assert code == 1
    assert "not sealed: 2-Async#1: run-1/spec.json" in out


def test_an_auditor_checks_with_a_copy_of_the_machines_key(failing_run: RunDir, tmp_path, monkeypatch) -> None:
    handed = tmp_path / "handed-over.key"
    shutil.copyfile(data_root() / "seal.key", handed)
    monkeypatch.setenv("LMRBENCH_DATA", str(tmp_path / "auditor"))  # another machine: no key of its own
    code, out = regrade(failing_run)
    assert code != 0 and "--seal-key" in out
    assert not (tmp_path / "auditor" / "seal.key").exists()  # checking makes no key
    code, out = regrade(failing_run, "--seal-key", str(handed))
    assert code == 0 and "every verdict is the same, and all of its evidence is sealed" in out


def test_a_pass_written_into_a_result_without_evidence_is_named(failing_run: RunDir) -> None:
    shutil.rmtree(failing_run.evidence_dir("2-Async", 1))
    result = failing_run.result_path("2-Async", 1)
    data = json.loads(result.read_text())
    result.write_text(json.dumps({**data, "status": "passed", "test_status": "", "reason": ""}))  # "never ran"
    code, out = regrade(failing_run)
    assert code == 1 and "not regraded: 2-Async#1: no evidence kept" in out
