"""tasks check on the planted-defect set: each task raises exactly the codes of its label, with exact places."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.defect_set import REPO
from helpers.planted_set import write_planted_set
from lmrbench.authoring.check.checkset import taskset_findings
from lmrbench.authoring.check.findings import Finding, Selection


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, set[str]], list[Finding]]:
    root = tmp_path_factory.mktemp("planted") / "set"
    labels = write_planted_set(root)
    names, findings = taskset_findings(root, jobs=1)
    assert sorted(names) == sorted(labels)
    return root, labels, findings


def _by_task(findings: list[Finding]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for f in findings:
        out.setdefault(f.task, set()).add(f.code)
    return out


def test_every_task_raises_exactly_its_planted_codes(planted: tuple[Path, dict[str, set[str]], list[Finding]]) -> None:
    _, labels, findings = planted
    got = _by_task(findings)
    wrong = {t: (sorted(want), sorted(got.get(t, set()))) for t, want in labels.items() if got.get(t, set()) != want}
    assert wrong == {}


def _one(findings: list[Finding], task_suffix: str, code: str) -> Finding:
    (f,) = [f for f in findings if f.task.endswith(task_suffix) and f.code == code]
    return f


def test_places_and_messages_name_what_was_found(planted: tuple[Path, dict[str, set[str]], list[Finding]]) -> None:
    root, _, findings = planted
    sibling = _one(findings, "-sibling-copy", "L207")
    lines = (root / sibling.task / sibling.path).read_text().splitlines()
    assert lines[sibling.line - 1].strip() == "tokens = list(prompt)"  # the body, not the unrelated code above
    assert lines[sibling.line - 2].startswith("def sample_decode(")
    assert sibling.severity.name == "WARNING" and sibling.message.endswith("lack what distinguishes it: no argmax")
    missing = _one(findings, "-missing-data", "F118")
    assert "reads outputs/expected.npy, which exists nowhere in the task" in missing.message
    assert "the repository's .gitignore ignores them ('outputs/')" in missing.message
    copy = _one(findings, "-copy-with-logging", "L202")
    assert copy.severity.name == "ERROR" and copy.path.endswith("trace.py")
    golden_pyc = _one(findings, "-pyc-golden", "L203")
    assert "compiled golden file decoding_golden: holds greedy_decode" in golden_pyc.message
    test_pyc = _one(findings, "-pyc-test", "L204")
    assert test_pyc.path.endswith("unit_test/__pycache__/unit_test_1.cpython-311.pyc")
    assert test_pyc.message == ("compiled unit_test_1: holds greedy_decode, but no name only the golden body uses; "
                                "delete it")
    assert "1 generated (csrc/lut.inc)" in _one(findings, "-generated-table", "L205").message
    assert "(tensors/expected.npy)" in _one(findings, "-untrusted-data", "F116").message
    assert _one(findings, "-lfs-pointer", "F113").path == f"{REPO}/unit_test/expected.npy"
    assert "'acme-lab/tiny-decoder'" in _one(findings, "-hub-model", "T311").message
    assert "ARG DIR defaults to 'other-repo'" in _one(findings, "-dir-default", "D404").message
    assert "no test varies temperature of greedy_decode" in _one(findings, "-unvaried-param", "T312").message
    assert _one(findings, "-empty-submodule", "F115").path == REPO
    lowercase = _one(findings, "-lowercase-passed", "T304")
    text = (root / lowercase.task / lowercase.path).read_text().splitlines()
    assert 'logging.info("Test passed")' in text[lowercase.line - 1]


def test_select_keeps_only_the_selected_codes(planted: tuple[Path, dict[str, set[str]], list[Finding]]) -> None:
    root, _, _ = planted
    _, findings = taskset_findings(root, Selection(["T3"], ["T312"]), jobs=2)
    assert {f.code for f in findings} == {"T303", "T304", "T306", "T307", "T308", "T309", "T310", "T311", "T313",
                                         "T314"}
    _, only_lfs = taskset_findings(root, Selection(["F113"]), jobs=1)
    assert [f.task for f in only_lfs] == [t for t in _by_task(only_lfs)] and {f.code for f in only_lfs} == {"F113"}
