"""Read what the recorder left in its output folder: the distinct calls of each goal function, what was skipped,
and what the run reached (``case_selection`` chooses the calls that become test cases).

Each recorded process writes ``calls-<pid>.jsonl`` (one line per distinct call saved, with its case file),
``summary-<pid>.json`` (what it patched, which calls it skipped and why, the golden body's arcs it reached) and,
on a fatal problem, ``error-<pid>.json`` (see ``runtime/lmrbench_record.py``). They are read here into the typed
items of ``recorded_call``, which the rest of recording passes along.
"""

from __future__ import annotations

import json
from pathlib import Path

from lmrbench.authoring.record.bodycoverage import BodyModel
from lmrbench.authoring.record.case_files import read_case
from lmrbench.authoring.record.recorded_call import RecordedCall, RecorderSummary, recorder_error
from lmrbench.core.taskset import Task
from lmrbench.errors import LmrError
from lmrbench.runtime.lmrbench_values import describe
from lmrbench.schemas.recording import BodyCoverage
from lmrbench.schemas.task_info import Implementation


def skipped_calls(out: Path) -> list[str]:
    """The notes of calls that could not be saved, over every process of the recording (distinct, in order)."""
    seen: list[str] = []
    for summary in read_summaries(out):
        for note in summary.skipped:
            if note.message not in seen:
                seen.append(note.message)
    return seen


def read_summaries(out: Path) -> list[RecorderSummary]:
    """What each recorded process says of its run (``summary-<pid>.json``, in name order), or LmrError naming a
    file that does not read."""
    return [RecorderSummary.from_json(_json(path), path) for path in sorted(out.glob("summary-*.json"))]


def read_errors(out: Path) -> list[str]:
    """The recorder's own errors (``error-<pid>.json``, in name order), or LmrError naming a file that does not
    read."""
    return [recorder_error(_json(path), path) for path in sorted(out.glob("error-*.json"))]


def _json(path: Path) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise LmrError(f"not JSON ({exc.msg})", path) from None


def body_models(task: Task, impl: Implementation, targets: list[tuple[str, str]]) -> dict[str, BodyModel | None]:
    """The statements and branches of each target's golden body (None where the golden file cannot be read)."""
    out: dict[str, BodyModel | None] = {}
    for file, qual in targets:
        which = impl.goal_files.index(file) if file in impl.goal_files else 0
        try:
            source = task.golden_path(impl, which).read_text(encoding="utf-8")
            out[f"{file}::{qual}"] = BodyModel(source, qual)
        except (OSError, UnicodeDecodeError, SyntaxError, IndexError):
            out[f"{file}::{qual}"] = None
    return out


def body_coverage(
    out: Path, chosen: dict[str, list[RecordedCall]], models: dict[str, BodyModel | None]
) -> list[BodyCoverage]:
    """Coverage of each target's body by its chosen calls, and what the whole run reached."""
    reached: dict[str, set[tuple[int, int]]] = {}
    for summary in read_summaries(out):
        for target, taken in summary.reached.items():
            reached.setdefault(target, set()).update(taken)
    result = []
    for target, calls in chosen.items():
        model = models.get(target)
        if model is None or not model.statements or all(c.arcs is None for c in calls):
            continue
        arcs = set().union(*(model.normalize(c.arcs or ()) for c in calls))
        result.append(model.measure(target, arcs, model.normalize(reached.get(target, set()))))
    return result


def pool_calls(out: Path, targets: list[tuple[str, str]], command: str) -> dict[str, list[RecordedCall]]:
    """The distinct saved calls of each target over every process, in the order they happened, or LmrError
    (the recorder's own error, no call saved, the function never called, a line of the recorder's that does
    not read)."""
    errors = read_errors(out)
    if errors:
        raise LmrError(errors[0])
    calls: list[RecordedCall] = []
    for path in out.glob("calls-*.jsonl"):
        calls += read_calls(path, out)
    calls.sort(key=lambda c: (c.time, c.pid, c.seq))
    summaries = read_summaries(out)
    pool: dict[str, list[RecordedCall]] = {}
    for file, qual in targets:
        target = f"{file}::{qual}"
        seen: set[str] = set()
        distinct = []
        for call in calls:
            if call.target == target and call.digest not in seen:
                seen.add(call.digest)
                distinct.append(call)
        if not distinct:
            notes = [n.message for sm in summaries for n in sm.skipped if n.target == target]
            if notes:
                raise LmrError(f"no call could be saved: {notes[0]}")
            raise LmrError(_never_called(target, file, command, summaries))
        pool[target] = distinct
    return pool


def read_calls(path: Path, out: Path) -> list[RecordedCall]:
    """The calls one recorded process saved (its ``calls-<pid>.jsonl``; their case files in ``out``), or LmrError
    naming the file and line that does not read."""
    calls = []
    for n, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise LmrError(f"line {n}: not JSON ({exc.msg})", path) from None
        calls.append(RecordedCall.from_line(data, out, path, f"line {n}"))
    return calls


def check_replays(target: str, calls: list[RecordedCall]) -> None:
    """LmrError when a kept recorded call did not give the same result when the recorder replayed it."""
    for n, call in enumerate(calls, 1):
        if call.amplified is None:
            _check_replay(target, n, call)


def _check_replay(target: str, n: int, call: RecordedCall) -> None:
    """LmrError when call ``n`` did not give the same result when the recorder replayed it."""
    if call.replay == "raised":
        raise LmrError(
            f"{target}: call {n} fails when replayed from its recorded inputs "
            f"({call.replay_detail}); it reads state that was not recorded (name a factory with "
            "--self-factory) or is not repeatable"
        )
    if call.replay == "checker":
        raise LmrError(
            f"{target}: the checker in info.json rejects the reference code's own result of call {n} "
            f"({call.replay_detail}); set another checker kind for the implementation"
        )
    if call.replay == "different":
        why = "even with the random state restored" if call.drew_random else "and draws no random numbers"
        raise LmrError(
            f"{target} is non-deterministic: call {n} replayed from its recorded inputs gives a "
            f"different result {why} ({call.replay_detail})"
        )


def call_shape(path: Path) -> str:
    """What tells calls apart for a reader: argument shapes and dtypes, scalar and string values."""
    case, arrays = read_case(path)
    parts = [f"{a['name']}={describe(a['value'], arrays)}" for a in case["arguments"]]
    if case["self"] is not None:
        parts.append(f"self={describe(case['self'], arrays)}")
    return "; ".join(parts)


def _never_called(target: str, file: str, command: str, summaries: list[RecorderSummary]) -> str:
    if any(s.main_is_goal for s in summaries):
        return (
            f"{target} was never recorded: `{command}` runs {file} as the main script; record through a "
            "script that imports it"
        )
    if not any(target in s.patched for s in summaries):
        return f"{target} was never called: `{command}` never imported {file}"
    return f"{target} was never called by `{command}`"
