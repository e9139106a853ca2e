"""The action report (paper Section 5.1): the kind of each shell command of a mini-swe-agent trajectory, the
events of an OpenHands output.jsonl, and both split by the unit-test outcome of the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lmrbench.benchmark.analysis.actions import action_report, classify_command
from lmrbench.benchmark.pipeline.rundir import current_digest
from lmrbench.errors import LmrError
from lmrbench.schemas.run import Candidate, CandidateStatus, EvalResult, ResultStatus, RunManifest, TaskEntry


@pytest.mark.parametrize(("command", "kind"), [
    ("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "submit"),
    ("sed -i 's/raise NotImplementedError/return x/' dpo/trainers.py", "edit"),
    ("cat <<'EOF' > dpo/trainers.py\nimport numpy as np\nEOF", "edit"),
    ("cd dpo-numpy && cp a.py b.py", "edit"),
    ("grep -rn preference_loss .", "search"),
    ("cd /workspace && find . -name '*.py'", "search"),
    ("ls -la", "search"),
    ("nl -ba dpo/trainers.py | sed -n '10,20p'", "read"),
    ("cat TASK.md", "read"),
    ("sed -n 1,40p dpo/trainers.py", "read"),
    ("python -c 'import dpo'", "run"),
    ("cd dpo-numpy && PYTHONPATH=. python check.py > out.txt", "edit"),
    ("cd dpo-numpy && python3 - <<'EOF' > dpo/trainers.py\nprint('x > y')\nEOF", "edit"),
    ("grep -n loss dpo/trainers.py && python3 gen.py >> dpo/trainers.py", "edit"),
    ("python3 run.py 2>&1 | tee log.txt", "edit"),
    ("python3 run.py &> log.txt", "edit"),
    ("python -c 'print(1 > 0)'", "run"),
    ("python check.py > /dev/null 2>&1; echo $?", "run"),
    ("pytest -q 2>&1 | tail -5", "run"),
    ("pytest -q", "run"),
])
def test_a_command_is_sorted_by_what_it_does(command: str, kind: str) -> None:
    assert classify_command(command) == kind


def _run_with(tmp_path: Path, outcomes: dict[str, ResultStatus | None]) -> Path:
    """A run folder of two tasks with trajectories, candidates and (where given) unit-test results."""
    run = tmp_path / "run"
    tasks = [TaskEntry(name=name, instance_id=name.split("-")[0], digest="d", implementations=[1])
             for name in outcomes]
    (run).mkdir()
    (run / "run.json").write_text(RunManifest(tool_version="t", source="agent", tasks=tasks).model_dump_json())
    for name, status in outcomes.items():
        folder = run / "candidates" / name / "1"
        folder.mkdir(parents=True)
        cand = current_digest(folder, Candidate(task=name, impl=1, source="agent",
                                                status=CandidateStatus.NO_FUNCTION))  # the digest evaluate gives it
        (folder / "candidate.json").write_text(cand.model_dump_json())
        if status is not None:
            (run / "results" / name).mkdir(parents=True)
            res = EvalResult(task=name, impl=1, status=status, candidate_digest=cand.digest)
            (run / "results" / name / "1.json").write_text(res.model_dump_json())
    return run


def _trajectory(*commands: str, format_errors: int = 0) -> dict:
    messages: list[dict] = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"}]
    for c in commands:
        messages.append({"role": "assistant", "content": f"```mswea_bash_command\n{c}\n```",
                         "extra": {"actions": [{"command": c}]}})
        messages.append({"role": "user", "content": "<returncode>0</returncode>", "extra": {"returncode": 0}})
    messages += [{"role": "user", "content": "Format error", "extra": {"interrupt_type": "FormatError"}}
                 ] * format_errors
    return {"messages": messages, "trajectory_format": "mini-swe-agent-1.1"}


def test_a_run_report_counts_each_kind_and_splits_by_outcome(tmp_path: Path) -> None:
    run = _run_with(tmp_path, {"1-A": ResultStatus.PASSED, "2-B": ResultStatus.FAILED, "3-C": None})
    trajectories = {
        "1-A": _trajectory("ls", "cat TASK.md", "sed -i 's/a/b/' f.py", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
        "2-B": _trajectory("grep -rn x .", "python t.py", "python t.py", format_errors=2),
        "3-C": _trajectory("cat f.py"),
    }
    for name, traj in trajectories.items():
        (run / "agent" / name).mkdir(parents=True)
        (run / "agent" / name / "trajectory.json").write_text(json.dumps(traj))

    report = action_report(run)
    assert report.agent == "mini-swe-agent"
    assert report.all.trajectories == 3
    assert report.all.counts == {"search": 2, "read": 2, "edit": 1, "submit": 1, "run": 2, "think": 2}
    assert report.by_outcome["passed"].counts == {"search": 1, "read": 1, "edit": 1, "submit": 1}
    assert report.by_outcome["failed"].counts == {"search": 1, "run": 2, "think": 2}
    assert report.by_outcome["unknown"].trajectories == 1


def test_an_openhands_log_is_counted_by_its_own_action_names(tmp_path: Path) -> None:
    """Pairs of (action, observation), as OpenHands 0.33 writes them; instance ids matched to the run's tasks."""
    run = _run_with(tmp_path, {"1-A": ResultStatus.PASSED, "2-B": ResultStatus.FAILED})

    def pair(action: str, source: str = "agent") -> list[dict]:
        return [{"id": 1, "source": source, "action": action, "args": {}},
                {"source": source, "observation": action, "content": ""}]

    lines = [
        {"instance_id": "1", "history": [pair("message", "user"), pair("recall", "user"), pair("read"),
                                         pair("edit"), pair("run"), pair("finish")]},
        {"instance_id": 2, "history": [pair("think"), pair("run_ipython"), pair("run"), pair("message"),
                                       pair("browse")]},
    ]
    log = tmp_path / "output.jsonl"
    log.write_text("\n".join(json.dumps(line) for line in lines) + "\n")

    report = action_report(log, results=run)
    assert report.agent == "OpenHands"
    assert report.by_outcome["passed"].counts == {"read": 1, "edit": 1, "run": 1, "submit": 1}
    assert report.by_outcome["failed"].counts == {"think": 2, "run": 2, "search": 1}
    assert report.all.trajectories == 2


def test_openhands_sessions_are_read_event_by_event(tmp_path: Path) -> None:
    """OpenHands' file store: one JSON file per event, under sessions/<task>/events/ (the task's folder name)."""
    run = _run_with(tmp_path, {"1-A": ResultStatus.FAILED})
    events = tmp_path / "file_store" / "sessions" / "1-A" / "events"
    events.mkdir(parents=True)
    for n, (source, action) in enumerate([("user", "message"), ("agent", "read"), ("agent", "run"),
                                          ("agent", "run"), ("environment", None), ("agent", "finish")]):
        event = {"id": n, "source": source, **({"action": action} if action else {"observation": "run"})}
        (events / f"{n}.json").write_text(json.dumps(event))
    report = action_report(tmp_path / "file_store", results=run)
    assert report.by_outcome == {"failed": report.all}
    assert report.all.counts == {"read": 1, "run": 2, "submit": 1}


def test_a_file_that_is_no_log_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "output.jsonl"
    bad.write_text('{"instance_id": 1}\n')
    with pytest.raises(LmrError, match="line 1: not an OpenHands output line"):
        action_report(bad)
    with pytest.raises(LmrError, match="neither a run folder"):
        action_report(tmp_path / "nothing")
