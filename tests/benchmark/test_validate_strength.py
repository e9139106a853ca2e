"""validate calls a task valid only when every mistake-shaped mutant is killed or shown equivalent, and names
each live one with the input that would kill it (and what the recording's search tried)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from helpers.tasks import Impl, write_task
from lmrbench.authoring.mutants.mutants import generate_mutants
from lmrbench.authoring.task.mask import mask_source
from lmrbench.benchmark.validation.plan import ValidateOptions, pick_mutants
from lmrbench.benchmark.validation.taskset import validate_taskset
from lmrbench.benchmark.validation.weakness import is_no_op, recorded_reasons
from lmrbench.fsutil import atomic_write_json
from lmrbench.schemas.recording import MutantCatch, MutantSearch, RecordingIndex
from lmrbench.schemas.task_info import CheckerSettings

GOLDEN = '''"""Losses past a warmup."""


def mean_loss(losses, count, warmup=0):
    """Mean of the losses past the warmup."""
    n = max(count - warmup, 1)
    return sum(losses[warmup:]) / n
'''
TEST = '''from losses import mean_loss


def test_mean_loss():
    assert mean_loss([2.0, 4.0], 2) == 3.0
    assert mean_loss([2.0, 4.0, 6.0], 3, warmup=1) == 5.0
'''
GUARD = "drop the guard '1' of 'max(count - warmup, 1)'"


def make(bench: Path, search: MutantSearch | None, equivalent: bool = False, hint: str = "") -> Path:
    """The task, with a recording index that says what became of the guard's mutant."""
    task = write_task(bench, "1-Loss", repo="repo", goal_file="losses.py",
                      goal=mask_source(GOLDEN, ["mean_loss"], file="losses.py"), golden=GOLDEN,
                      impls=[Impl("mean_loss", "unit_test/unit_test_1.py", "Mean.")],
                      files={"unit_test/unit_test_1.py": TEST})
    [guard] = [mu for mu in generate_mutants(GOLDEN, "mean_loss", file="losses.py") if GUARD in mu.description]
    catch = MutantCatch(target="losses.py::mean_loss", digest=guard.digest, kind=guard.kind,
                        description=guard.description, killed=False, equivalent=equivalent, search=search,
                        hint=hint)
    index = RecordingIndex(implementation=1, command="python run.py", sandbox="local",
                           recorded_at=datetime(2026, 1, 1, tzinfo=UTC), max_calls=12, checker=CheckerSettings(),
                           cases=[], mutants=[catch])
    atomic_write_json(task / "repo" / "unit_test" / "data" / "impl_1" / "index.json", index.model_dump(mode="json"))
    return task


def validate(bench: Path):
    [row] = validate_taskset(bench, sandbox="local", options=ValidateOptions(repeat=1, max_mutants=6,
                                                                             min_kill_rate=0.0)).rows
    return row


def test_a_live_mistake_is_named_with_the_input_that_kills_it_and_what_the_search_tried(tmp_path):
    live = MutantSearch(outcome="live", tried=["count in 0, 1", "warmup in 1, 2"], inputs=14)
    make(tmp_path / "bench", live)
    row = validate(tmp_path / "bench")
    assert row.valid and row.weak
    [reason] = [r for r in row.weak_reasons if GUARD in r]
    assert reason.startswith("M")
    assert f" drop_guard: line 6: {GUARD} passes; a case where the guard '1' binds" in reason
    assert reason.endswith("the recording's search found no such input among 14 input(s): count in 0, 1, "
                           "warmup in 1, 2")
    # validation ran it with the tests themselves: it survived, whatever the recording counted
    assert any(GUARD in s for s in row.survivors)


def test_a_mutant_shown_equivalent_is_no_weakness_and_an_older_recording_still_names_it(tmp_path):
    equivalent = MutantSearch(outcome="equivalent", tried=["random inputs of the recorded shapes"], inputs=40)
    make(tmp_path / "a", equivalent)
    row = validate(tmp_path / "a")
    assert row.valid and not any(GUARD in r for r in row.weak_reasons)
    # written before the search: equivalent on the recorded calls, and the recording said it names a mistake
    make(tmp_path / "b", None, equivalent=True, hint="a case with count 0")
    [reason] = [r for r in validate(tmp_path / "b").weak_reasons if GUARD in r]
    assert reason == f"drop_guard: line 6: {GUARD} passes on every recorded input; a case where the guard '1' " \
        "binds (a count of zero, a value past the bound) would kill it"


def test_the_search_s_live_mutants_and_the_mistake_kinds_are_run_first():
    mutants = [("losses.py", "mean_loss", mu) for mu in generate_mutants(GOLDEN, "mean_loss", file="losses.py")]
    guard = next(pm for pm in mutants if GUARD in pm[2].description)
    picked = pick_mutants(mutants, 3, live={guard[2].digest})
    assert guard in picked and len(picked) == 3
    assert [pm[2].kind for pm in picked if pm is not guard][:2] != ["constant_return", "return_input"]
    # besides the body that does nothing, which always runs (it finds tests blind to the function)
    assert all(pm[2].kind not in ("constant_return", "return_input") or is_no_op(pm[2])
               for pm in pick_mutants(mutants, 4))


def test_an_equivalent_dropped_parameter_is_as_telling_as_a_pinned_one():
    def catch(kind, description):
        return MutantCatch(target="losses.py::mean_loss", digest=description, kind=kind, description=description,
                           killed=False, equivalent=True)

    dropped = catch("drop_term", "line 6: drop 'warmup' from 'count - warmup'")
    other = catch("drop_term", "line 7: drop 'n' from 'n + 1'")
    scaled = catch("scale_constant", "line 30: scale 'recall' by 2 in 'precision + recall'")
    pins = {"losses.py::mean_loss": {"warmup": "0", "count": "2"}}
    assert recorded_reasons([dropped, other, scaled], [], pins) == [
        "drop_term: line 6: drop 'warmup' from 'count - warmup' passes on every recorded input; a case where "
        "'warmup' is not zero and changes the result would kill it"]


def test_the_recording_s_values_of_attribute_paths_pin_nested_values():
    from lmrbench.benchmark.validation.plan import RecordedFacts

    target = "focal.py::FocalLoss.forward"
    facts = RecordedFacts(pins={target: {"beta": "0.1", "self.cfg.loss.gamma": "2.0", "self.mode": "'mean'",
                                         "self.table": "<an array>"}})
    assert facts.plain_pins(target) == {"beta": "0.1"}
    assert facts.nested(target) == {"self.cfg.loss.gamma": [2.0], "self.mode": ["mean"]}
    assert facts.nested("other.py::f") == {}


def test_an_input_the_search_found_is_quoted_when_the_tests_still_let_the_mutant_pass():
    from lmrbench.benchmark.validation.weakness import live_reason

    found = MutantSearch(outcome="killed", input="count=0", case="case_9.npz", inputs=3)
    catch = MutantCatch(target="losses.py::mean_loss", digest="d", kind="drop_guard", description=GUARD,
                        killed=False, search=found)
    assert live_reason("drop_guard", GUARD, "M2", catch).endswith(
        "would kill it; the recording's search found count=0 (case_9.npz), yet the tests let it pass")
