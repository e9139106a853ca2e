"""Recorded calls as the host reads them: the recorder's lines, the probe's added cases and each process's summary
become typed items once, and a field that does not read is one error naming the file and the line or entry."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from lmrbench.authoring.record.captured_calls import (
    check_replays,
    read_calls,
    read_errors,
    read_summaries,
    skipped_calls,
)
from lmrbench.authoring.record.recorded_call import Amplification, RecordedCall, RecorderSummary, SkippedCall
from lmrbench.errors import LmrError

RUNTIME = Path(__file__).resolve().parents[2] / "src" / "lmrbench" / "runtime"
LINE = {
    "file": "case-41-1.npz", "target": "clf/losses.py::loss", "digest": "ab12", "bytes": 2048,
    "sizes": {"arguments": 900, "return value": 100}, "drew_random": False, "replay": "identical",
    "replay_detail": "", "arcs": [[-12, 13], [13, 14], [14, -12]], "time": 1700000000.25, "pid": 41, "seq": 1,
}
SUMMARY = {
    "pid": 41, "calls": 7, "saved": {"clf/losses.py::loss": 3}, "patched": ["clf/losses.py::loss"],
    "main_is_goal": False, "reached": {"clf/losses.py::loss": [[-12, 13], [13, -12]]},
    "skipped": [{"target": "clf/losses.py::loss", "message": "clf/losses.py::loss: call not kept: precision-sensitive",
                 "precision": "the top-k set"}, {"target": "clf/losses.py::loss", "message": "cannot save a lock"}],
    "unsaved": {"clf/losses.py::loss": 2},
}
MADE = {
    "file": "amp-0-1-0.npz", "param": "beta", "value": 0.2, "set": {"beta": 0.2}, "kind": "value", "fill": [],
    "noise": {}, "base": "t0-c0.npz", "when": {}, "effective": [],
}


def _calls_file(tmp_path: Path, *lines: object) -> Path:
    path = tmp_path / "calls-41.jsonl"
    path.write_text("".join((ln if isinstance(ln, str) else json.dumps(ln)) + "\n" for ln in lines))
    return path


def test_a_recorder_line_reads_as_a_recorded_call(tmp_path):
    path = _calls_file(tmp_path, LINE, "", {**LINE, "file": "case-41-2.npz", "seq": 2, "replay": "raised",
                                            "replay_detail": "KeyError: 'x'", "arcs": None})
    first, second = read_calls(path, tmp_path)
    assert first == RecordedCall(
        file="case-41-1.npz", path=tmp_path / "case-41-1.npz", target="clf/losses.py::loss", digest="ab12",
        size=2048, sizes={"arguments": 900, "return value": 100}, drew_random=False, replay="identical",
        replay_detail="", arcs=((-12, 13), (13, 14), (14, -12)), time=1700000000.25, pid=41, seq=1)
    assert second.arcs is None and second.amplified is None
    with pytest.raises(LmrError, match=r"call 2 fails when replayed from its recorded inputs \(KeyError: 'x'\)"):
        check_replays("clf/losses.py::loss", [first, second])


@pytest.mark.parametrize(("line", "problem"), [
    ({k: v for k, v in LINE.items() if k != "digest"}, "line 1: field 'digest' is missing (want a string)"),
    ({**LINE, "bytes": "2048"}, "line 1: field 'bytes' is str '2048' (want an integer)"),
    ({**LINE, "pid": True}, "line 1: field 'pid' is bool 'True' (want an integer)"),
    ({**LINE, "replay": "same"}, "line 1: field 'replay' is str 'same' (want one of identical, close, raised, "
                                 "checker, different)"),
    ({**LINE, "file": "../case.npz"}, "line 1: field 'file' is str '../case.npz' (want a file name)"),
    ({**LINE, "arcs": [[1, 2, 3]]}, "line 1: field 'arcs' is list '[[1, 2, 3]]' (want a list of [from, to] line "
                                    "pairs or null)"),
    ([LINE], "line 1: not a JSON object"),
    ('{"file": ', "line 1: not JSON (Expecting value)"),
])
def test_a_line_that_does_not_read_is_one_error_naming_the_file_and_line(tmp_path, line, problem):
    path = _calls_file(tmp_path, line)
    with pytest.raises(LmrError) as err:
        read_calls(path, tmp_path)
    assert err.value.path == str(path) and err.value.problem == problem
    assert "\n" not in str(err.value)


def test_an_added_case_reads_as_a_call_that_says_how_it_was_made(tmp_path):
    report = tmp_path / "probe.json"
    made = Amplification.from_json({**MADE, "kind": "pair", "set": {"beta": 0.2, "eps": 1e-3},
                                    "effective": ["beta"]}, report, "f.py::loss: added case 1")
    assert made.settings == {"beta": 0.2, "eps": 1e-3} and made.effective == ("beta",) and made.fill == ()
    (tmp_path / made.file).write_bytes(b"1234")
    call = RecordedCall.added(made, tmp_path / made.file, "f.py::loss", "cd34", 5.0, 0)
    assert (call.size, call.replay, call.arcs, call.amplified) == (4, "identical", None, made)
    check_replays("f.py::loss", [call])  # an added case is never checked as a replay
    with pytest.raises(LmrError) as err:
        Amplification.from_json({**MADE, "when": {"flag": [1]}}, report, "f.py::loss: added case 2")
    assert str(err.value) == (f"{report}: f.py::loss: added case 2: field 'when' is dict \"{{'flag': [1]}}\" "
                              "(want an object of bools, numbers and strings)")


def test_a_process_summary_reads_with_its_skipped_calls_and_their_precision_notes(tmp_path):
    (tmp_path / "summary-41.json").write_text(json.dumps(SUMMARY))
    older = {k: v for k, v in SUMMARY.items() if k != "unsaved"}  # written before every skipped call was counted
    (tmp_path / "summary-42.json").write_text(json.dumps({**older, "pid": 42, "skipped": [SUMMARY["skipped"][1]]}))
    first, second = read_summaries(tmp_path)
    assert first == RecorderSummary(
        pid=41, calls=7, saved={"clf/losses.py::loss": 3}, patched=("clf/losses.py::loss",), main_is_goal=False,
        reached={"clf/losses.py::loss": ((-12, 13), (13, -12))},
        skipped=(SkippedCall("clf/losses.py::loss", "clf/losses.py::loss: call not kept: precision-sensitive",
                             "the top-k set"), SkippedCall("clf/losses.py::loss", "cannot save a lock")),
        unsaved={"clf/losses.py::loss": 2})
    assert second.pid == 42 and second.skipped[0].precision == "" and second.unsaved == {}
    assert skipped_calls(tmp_path) == ["clf/losses.py::loss: call not kept: precision-sensitive", "cannot save a lock"]
    (tmp_path / "summary-43.json").write_text(json.dumps({**SUMMARY, "skipped": [{"target": "t"}]}))
    with pytest.raises(LmrError) as err:
        read_summaries(tmp_path)
    assert str(err.value) == \
        f"{tmp_path / 'summary-43.json'}: skipped note 1: field 'message' is missing (want a string)"


def test_the_recorders_error_is_its_message_or_an_error_naming_the_file(tmp_path):
    assert read_errors(tmp_path) == []
    (tmp_path / "error-41.json").write_text(json.dumps({"message": "f.py::loss: call 1 needs 30 MB"}))
    assert read_errors(tmp_path) == ["f.py::loss: call 1 needs 30 MB"]
    (tmp_path / "error-42.json").write_text("{")
    with pytest.raises(LmrError, match=r"error-42.json: not JSON \(Expecting property name"):
        read_errors(tmp_path)


def _dict_keys(source: Path, marker: str) -> set[str]:
    """The string keys of the one dict literal in ``source`` that has the key ``marker``."""
    found = [{k.value for k in node.keys if isinstance(k, ast.Constant)}
             for node in ast.walk(ast.parse(source.read_text())) if isinstance(node, ast.Dict)
             and any(isinstance(k, ast.Constant) and k.value == marker for k in node.keys)]
    assert len(found) == 1, f"{source.name}: {len(found)} dicts with the key {marker!r}"
    return found[0]


def test_the_host_reads_every_field_the_sandbox_writes_and_no_other():
    # the recorder's line (lmrbench_record) and the probe's added case (lmrbench_probe), as their sources spell them
    assert _dict_keys(RUNTIME / "lmrbench_record.py", "replay_detail") == set(LINE)
    assert _dict_keys(RUNTIME / "lmrbench_probe.py", "effective") == set(MADE)
    assert _dict_keys(RUNTIME / "lmrbench_record.py", "main_is_goal") == set(SUMMARY)
