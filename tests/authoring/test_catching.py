"""Recorded tests that tell right from wrong: cases chosen by what they catch, cases added where the recording
never varied a parameter, and validation that reports kill rates per mutant kind (local sandbox)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.smoothed_ce import GOLDEN_OTHER_STYLE, WRONG, make_task
from helpers.tasks import tagged
from lmrbench.authoring.check.check import task_findings
from lmrbench.authoring.record import amplify
from lmrbench.authoring.record.record import record_tests
from lmrbench.benchmark.sandbox.running.local import LocalRunner
from lmrbench.benchmark.validation.plan import ValidateOptions
from lmrbench.benchmark.validation.task import validate_task
from lmrbench.benchmark.validation.weakness import verdict, weak_reasons
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.variant import evaluate_variant
from lmrbench.progress import NullProgress
from lmrbench.schemas.recording import RecordingIndex
from lmrbench.schemas.testrun import TestStatus
from lmrbench.schemas.validation import MutantResult

COMMAND = "python evaluate.py"


pytestmark = pytest.mark.xdist_group("catching")  # the module's recorded task, made once on one worker

@pytest.fixture(scope="module")
def local():
    return Sandbox(LocalRunner())


class LogLines(NullProgress):
    """Progress that keeps the log lines, as the app's work panel shows them."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def log(self, line: str) -> None:
        self.lines.append(line)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, local):
    task = make_task(tmp_path_factory.mktemp("ce"))
    progress = LogLines()
    result = record_tests(task, 1, COMMAND, sandbox=local, progress=progress)
    assert all(line in progress.lines for line in result.summary)  # the app's recording step logs the summary
    return task, result


def candidate(tmp_path, body):
    (tmp_path / "clf").mkdir(parents=True)
    (tmp_path / "clf" / "losses.py").write_text("import numpy as np\n\n\n" + body)
    return tmp_path


def status(sandbox, task, variant):
    return evaluate_variant(sandbox, task, task.info.implementation(1), tagged(variant), timeout=300).status


def test_varied_values_around_the_recorded_one():
    assert amplify.varied_values(0.1) == [0.05, 0.2, 0.3, 0.5]
    assert amplify.varied_values(0.5) == [0.25, 0.75]
    assert amplify.varied_values(0.0) == [0.1, 0.2, 0.3]
    assert amplify.varied_values(1.0) == [0.5, 2.0, 3.0, 5.0]
    assert amplify.varied_values(True) == [False]
    # an int: a sign change, zero, +-1, and a value inside the range of the array that holds it first
    assert amplify.varied_values(-100) == [100, 0, -99, -101, 1]
    assert amplify.varied_values(-100, inside=[2]) == [2, 100, 0, -99, -101]
    assert amplify.varied_values(50) == [-50, 0, 51, 49, 1]
    assert amplify.varied_values("mean") == []  # text: the literals the body compares it with
    assert amplify.range_text([0.05, 0.2, 0.3, 0.5]) == "0.05-0.5"


def test_a_flag_never_combined_with_another_setting_gets_a_case_that_combines_them():
    data = Path(__file__).resolve().parents[2] / "examples/tasks/1-DPO/dpo-numpy/unit_test/data/impl_1"
    recorded = [data / f"case_{n}.npz" for n in (1, 2, 3)]  # the driver's three settings
    assert [amplify.scalar_arguments(p) for p in recorded] == [
        {"beta": 0.1, "label_smoothing": 0.0, "reference_free": False},
        {"beta": 0.1, "label_smoothing": 0.2, "reference_free": False},
        {"beta": 0.1, "label_smoothing": 0.0, "reference_free": True}]
    assert amplify.missing_pairs(recorded) == [("label_smoothing", 0.2, {"reference_free": True})]
    assert amplify.missing_pairs(recorded[:2]) == []


def test_summary_says_what_was_kept_dropped_and_added(recorded):
    task, result = recorded
    summary = "\n".join(result.summary)
    assert "kept 3 of 5 distinct recorded call(s)" in summary
    assert "dropped 2 call(s)" in summary and "(epsilon=0.1, ignore_index=-100) x2" in summary
    assert "epsilon was always 0.1 in the recording; added 4 case(s) with epsilon 0.05-0.5" in summary
    # an int that the targets hold: a value among the class ids, a sign change, zero, +-1, and all ignored
    assert "ignore_index was always -100 in the recording; added 5 case(s) with ignore_index 2, 100, 0, -99, " \
        "-101" in summary
    assert "added a case with every targets entry = ignore_index" in summary
    assert "added a case with noise where targets == ignore_index" in summary
    assert not any(line.startswith("weak: ") for line in result.summary)
    assert "drop_mask 4/4" in summary and "pin_parameter 2/2" in summary
    header = result.test_file.read_text().split('"""')[1]
    assert "epsilon was always 0.1 in the recording; 4 case(s) with epsilon 0.05-0.5" in " ".join(header.split())
    index = RecordingIndex.model_validate_json((result.data_dir / "index.json").read_text())
    assert [(a.param, a.values) for a in index.amplified] == [
        ("epsilon", ["0.05", "0.2", "0.3", "0.5"]), ("ignore_index", ["2", "100", "0", "-99", "-101"])]
    assert index.unvaried == [] and index.selection == result.summary
    assert [c.amplified for c in index.cases][3:12] == [
        "epsilon=0.05", "epsilon=0.2", "epsilon=0.3", "epsilon=0.5", "ignore_index=2", "ignore_index=100",
        "ignore_index=0", "ignore_index=-99", "ignore_index=-101"]
    # the one call with masked targets is kept, and so named
    assert any(amplify.special_values(result.data_dir / c.file) == ["targets holds ignore_index"]
               for c in index.cases[:3])
    # shifting logits by their max changes nothing: such mutants are equivalent, not counted against the tests
    assert any(m.equivalent and "logits.max" in m.description for m in index.mutants)
    assert all(m.killed for m in index.mutants if not m.equivalent)


@pytest.mark.parametrize("wrong", sorted(WRONG))
def test_plausible_wrong_answers_fail(recorded, local, tmp_path, wrong):
    task, _ = recorded
    assert status(local, task, candidate(tmp_path, WRONG[wrong])) is TestStatus.FAILED


def test_golden_and_another_correct_style_pass(recorded, local, tmp_path):
    task, _ = recorded
    assert status(local, task, "golden") is TestStatus.PASSED
    assert status(local, task, candidate(tmp_path, GOLDEN_OTHER_STYLE)) is TestStatus.PASSED


def test_recording_by_coverage_alone_passes_a_pinned_epsilon(tmp_path, local):
    task = make_task(tmp_path / "old")
    result = record_tests(task, 1, COMMAND, sandbox=local, probe=False)
    assert len(result.cases) == 3 and not any("was always" in line for line in result.summary)
    assert "no test varies epsilon" in result.summary
    assert status(local, task, candidate(tmp_path / "cand", WRONG["pins epsilon"])) is TestStatus.PASSED
    # tasks check reads what the recording wrote
    [found] = [f.message for f in task_findings(task) if f.code == "T312"]
    assert found.startswith("implementation 1: no test varies epsilon, ignore_index of ")


def test_validation_reports_kill_rates_per_kind(recorded, tmp_path):
    task, _ = recorded
    [res] = validate_task(task.path, sandbox="local", run_dir=tmp_path / "runs",
                          options=ValidateOptions(repeat=1, max_mutants=14))
    assert res.valid and not res.weak and res.weak_reasons == []
    kinds = res.kind_kills
    assert {"pin_parameter", "drop_mask", "negate", "arith_swap"} <= set(kinds)
    assert all(killed == total for killed, total in kinds.values())
    assert not any(m.equivalent for m in res.mutants)  # the recording's equivalent mutants are not picked


def test_a_surviving_pinned_parameter_makes_tests_weak():
    def mutant(kind, description, killed):
        return MutantResult(qualname="f", kind=kind, description=description, status=TestStatus.PASSED,
                            killed=killed, name=f"M1 {kind}")

    mutants = [mutant("pin_parameter", "pin beta to 0.1 (its recorded value)", False),
               mutant("pin_parameter", "pin label_smoothing to 0.0 (its default)", True),
               mutant("flip_sign", "line 3: flip", False)]
    assert weak_reasons(mutants, ["temperature"]) == ["no test varies temperature", "no test varies beta"]
    detached = mutant("detach", "line 9: detach 'losses' from the autograd graph", False)
    assert weak_reasons([detached], []) == [
        "M1 detach: line 9: detach 'losses' from the autograd graph passes; a case whose result requires grad "
        "would kill it"]
    equivalent = mutants[0].model_copy(update={"equivalent": True})
    assert weak_reasons([equivalent], []) == []
    # the pinned parameter is a typed field; a result written before it (no ``pinned``) still names it
    typed = mutant("pin_parameter", "beta := 0.1", False).model_copy(update={"pinned": "beta"})
    assert weak_reasons([typed], []) == ["no test varies beta"]
    assert mutants[0].pinned == "" and weak_reasons(mutants[:1], []) == ["no test varies beta"]
    assert verdict(True, True, 12, 12, 0.75, ["no test varies beta"]) == "weak: no test varies beta"
    assert verdict(True, True, 2, 12, 0.75, ["no test varies beta"]) == \
        "weak: kills 2/12 = 17% < 75%; no test varies beta"


def test_an_equivalent_mistake_shaped_mutant_makes_tests_weak_and_says_what_would_kill_it():
    from lmrbench.authoring.record.recording_summary import kill_hint
    from lmrbench.benchmark.validation.weakness import recorded_reasons
    from lmrbench.schemas.recording import MutantCatch

    branch = "line 30: drop the branch `if precision + recall == 0`"
    assert kill_hint("drop_branch", branch) == "a case where `precision + recall == 0` holds and changes the result"
    assert kill_hint("pin_parameter", "pin beta to 0.1 (its recorded value)") == "a case with beta other than 0.1"

    def catch(kind, description, hint):
        return MutantCatch(target="f.py::f", digest=kind, kind=kind, description=description, killed=False,
                           equivalent=True, hint=hint)

    catches = [catch("drop_branch", branch, kill_hint("drop_branch", branch)),
               catch("pin_parameter", "pin beta to 0.1 (its recorded value)", "a case with beta other than 0.1"),
               catch("flip_sign", "line 3: drop the minus of '-1'", "")]  # generic kinds name no mistake
    reasons = recorded_reasons(catches, ["beta"])  # beta is already named by `no test varies beta`
    assert reasons == [f"drop_branch: {branch} passes on every recorded input; a case where "
                       "`precision + recall == 0` holds and changes the result would kill it"]
    assert weak_reasons([], ["beta"], reasons) == ["no test varies beta", *reasons]


def test_a_probe_that_cannot_run_leaves_the_recording_standing(tmp_path, local):
    from helpers.record_fixture import make_task as make_tiny_task

    configured = '''
        import os

        import numpy as np

        SCALE = float(os.environ["TINY_SCALE"])  # read when imported: only the command sets it


        def scaled(x, k=2.0):
            """x times k times the configured scale."""
            return np.asarray(x) * k * SCALE
    '''
    driver = '''
        import os

        os.environ["TINY_SCALE"] = "3"
        from model.configured import scaled

        scaled([1.0, 2.0])
        scaled([0.0, 5.0], k=0.5)
    '''
    task = make_tiny_task(tmp_path, "model/configured.py::scaled",
                          extra={"model/configured.py": configured, "run.py": driver})
    result = record_tests(task, 1, "python run.py", sandbox=local)
    assert result.summary[0].startswith("note: checking what the recorded calls catch failed: ")
    assert result.summary[0].endswith("cases chosen by coverage, parameter and special values only")
    assert [c.arguments["k"] for c in result.cases] == ["2.0", "0.5"]
    assert result.test_file.is_file()
