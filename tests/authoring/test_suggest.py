"""``suggest`` on a repository and its paper: candidates with the commands that call them (run for real under the
recorder in the local runner), what the codec can carry, copies of their bodies and tasks that mask them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers.suggest_fixture import METHODS, make_pair, target_ref
from lmrbench.authoring.suggest.suggest import copies_elsewhere, suggest
from lmrbench.authoring.suggest.suggest_callers import default_commands
from lmrbench.authoring.task.task_new import create_task
from lmrbench.authoring.task.task_spec import FunctionRef, TaskSpec
from lmrbench.benchmark.sandbox.running.local import LocalRunner
from lmrbench.cli.suggest_cmd import _calls, console, print_suggestion
from lmrbench.errors import LmrError
from lmrbench.harness.sandbox import Sandbox

DPO = METHODS[1]
EXTRA = '''\
import numpy as np


def preference_policy_apply(policy, chosen, rejected):
    """Apply the policy to the chosen and the rejected responses."""
    return policy(chosen) - policy(rejected)
'''
SCRIPT = '''\
import numpy as np

from mlkit.extra import preference_policy_apply

print(preference_policy_apply(lambda r: r * 2.0, np.ones(3), np.zeros(3)))
'''


@pytest.fixture(scope="module")
def local() -> LocalRunner:
    return Sandbox(LocalRunner())


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    return make_pair(tmp_path, DPO, git=False)


def test_the_described_function_comes_first_with_its_caller_and_its_calls(pair, local):
    repo, pdf = pair
    result = suggest(repo, pdf, sandbox=local, top=10)
    assert result.commands == default_commands(repo) == [
        "python -m pytest -q -p no:cacheprovider tests", "python examples/train.py"]
    assert all(r.ok for r in result.runs)
    first = result.candidates[0]
    assert first.function.ref == target_ref(DPO) and first.rank == 1
    assert first.caller == "python examples/train.py"
    assert first.calls.calls == 3 and first.calls.codec == "yes" and not first.calls.capped
    assert first.copies == [] and first.task is None
    uncalled = [c for c in result.candidates if not c.calls.calls and not c.not_recordable]
    assert uncalled and all(c.caller is None and c.calls.codec == "" for c in uncalled)
    assert {c.not_recordable for c in result.candidates} <= {None, "a generator"}


def test_arguments_the_codec_cannot_carry_are_said(pair, local):
    repo, pdf = pair
    (repo / "mlkit/extra.py").write_text(EXTRA)
    (repo / "use_policy.py").write_text(SCRIPT)
    result = suggest(repo, pdf, sandbox=local, top=40, commands=["python use_policy.py"])
    cand = next(c for c in result.candidates if c.function.qualname == "preference_policy_apply")
    assert cand.calls.calls == 0 and cand.calls.codec.startswith("no: ")
    assert "function" in cand.calls.codec
    # the table says it was called, and why it cannot be recorded, not "none" as for a function nothing called
    assert cand.calls.unsaved == 1
    assert _calls(cand) == f"called 1 time, none can be recorded: {cand.calls.codec.removeprefix('no: ')}"
    assert all(_calls(c) == "none" for c in result.candidates if not c.calls.calls and not c.calls.unsaved
               and not c.not_recordable)
    with console.capture() as shown:
        print_suggestion(result, ran=True)
    out = " ".join(shown.get().split())
    assert "called, but no call can be recorded: mlkit/extra.py::preference_policy_apply (called 1 time" in out
    assert "preference_policy_apply" not in out.split("no runnable caller:")[-1]
    assert next(c for c in result.candidates if c.function.ref == target_ref(DPO)).caller is None


def test_no_command_starts_once_the_budget_is_spent(pair, local):
    repo, pdf = pair
    result = suggest(repo, pdf, sandbox=local, budget=0, commands=["python examples/train.py"])
    assert [(r.exit_code, r.note) for r in result.runs] == [(None, "not run: the time budget was spent")]
    assert all(c.calls.calls == 0 for c in result.candidates)


def test_copies_of_a_body_elsewhere_are_found_and_the_body_itself_is_not(pair):
    repo, _ = pair
    from lmrbench.core.source.index import index_repo

    dpo = next(f for f in index_repo(repo) if f.ref == target_ref(DPO))
    assert copies_elsewhere(repo, [dpo]) == {dpo.ref: []}
    body = "\n".join((repo / dpo.file).read_text().splitlines()[dpo.lineno - 1 : dpo.end_lineno])
    (repo / "notebooks").mkdir()
    (repo / "notebooks/scratch.py").write_text("import numpy as np\n\n\n" + body.replace("dpo_loss", "old_loss"))
    found = copies_elsewhere(repo, [dpo])[dpo.ref]
    assert len(found) == 1 and found[0].startswith("notebooks/scratch.py:4-")


def test_a_function_a_task_already_masks_is_said(pair, tmp_path: Path):
    repo, pdf = pair
    bench = tmp_path / "bench"
    spec = TaskSpec(source=str(repo), functions=[FunctionRef.parse(target_ref(DPO))], instructions=["Do it."],
                    bench=bench)
    task = create_task(spec)
    result = suggest(repo, pdf, bench=bench)
    assert result.candidates[0].task == f"{task.name} (implementation 1)"
    assert all(c.task is None for c in result.candidates[1:])
    assert all(not c.calls.calls for c in result.candidates)  # no sandbox: nothing ran


def test_bad_inputs_are_named(pair, tmp_path: Path):
    repo, pdf = pair
    with pytest.raises(LmrError, match="not a folder"):
        suggest(tmp_path / "missing", pdf)
    with pytest.raises(LmrError, match="no such PDF") as err:
        suggest(repo, tmp_path / "missing.pdf")
    assert "missing.pdf" in str(err.value)
    empty = tmp_path / "empty"
    shutil.copytree(repo, empty, ignore=shutil.ignore_patterns("*.py"))
    with pytest.raises(LmrError, match="no function of the repository shares a word"):
        suggest(empty, pdf)


def test_a_candidate_the_recorder_cannot_wrap_is_left_out_and_the_others_still_count(pair, local):
    repo, pdf = pair
    methods = repo / "mlkit/methods.py"
    methods.write_text(methods.read_text() + "\n\ndef preference_margin(chosen, rejected, beta):\n"
                       '    """Margin of the chosen over the rejected responses."""\n'
                       "    return beta * (chosen - rejected)\n\n\ndel preference_margin\n")
    result = suggest(repo, pdf, sandbox=local, top=40, commands=["python examples/train.py"])
    gone = next(c for c in result.candidates if c.function.qualname == "preference_margin")
    assert gone.calls.codec == "no: cannot be recorded: no function preference_margin in mlkit/methods.py"
    dpo = next(c for c in result.candidates if c.function.ref == target_ref(DPO))
    assert dpo.calls.calls == 3 and dpo.caller == "python examples/train.py"
    assert [r.command for r in result.runs] == ["python examples/train.py"] and result.runs[0].ok


def test_only_a_function_that_yields_is_a_generator():
    from lmrbench.authoring.suggest.suggest_callers import recordable
    from lmrbench.core.source.index import index_source

    src = ('def batches(xs):\n    """Yield the batches."""\n    yield from xs\n\n\n'
           'def loss(x):\n    """We yield a number (says the docstring)."""\n    def inner():\n        yield x\n'
           '    return x\n')
    lines = src.splitlines()
    found = {f.qualname: recordable(f, lines) for f in index_source(src, "m.py")}
    assert found == {"batches": "a generator", "loss": None, "loss.inner": "a nested function"}


NESTED = '''\
import numpy as np


def preference_policy_margin(weights, chosen, rejected):
    """The policy's margin between the chosen and the rejected responses."""
    return float(weights @ chosen - weights @ rejected)


def preference_policy_batches(weights, chosen, rejected, scales):
    """The policy's preference margins, one per scale of the responses."""
    return [preference_policy_margin(weights, chosen * s, rejected * s) for s in scales]
'''
NESTED_SCRIPT = '''\
import numpy as np

from mlkit.nested import preference_policy_batches

print(preference_policy_batches(np.full(3, 2.0), np.ones(3), np.zeros(3), [1.0, 3.0]))
'''


def test_a_candidate_called_from_inside_another_candidate_counts_its_calls(pair, local):
    repo, pdf = pair
    (repo / "mlkit" / "nested.py").write_text(NESTED)
    (repo / "run_nested.py").write_text(NESTED_SCRIPT)
    result = suggest(repo, pdf, sandbox=local, top=60, commands=["python run_nested.py"])
    by_ref = {c.function.ref: c for c in result.candidates}
    outer = by_ref["mlkit/nested.py::preference_policy_batches"]
    inner = by_ref["mlkit/nested.py::preference_policy_margin"]
    assert outer.calls.calls == 1 and outer.caller == "python run_nested.py"
    assert inner.calls.calls == 2 and inner.caller == "python run_nested.py" and inner.calls.codec == "yes"


def test_a_requirement_that_cannot_install_ranks_without_calls_and_says_why(pair, local, tmp_path, monkeypatch):
    monkeypatch.setenv("LMRBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # an index with nothing on it: pip's own answer, offline
    monkeypatch.setenv("PIP_FIND_LINKS", str((tmp_path / "empty").resolve()))
    (tmp_path / "empty").mkdir()
    repo, pdf = pair
    (repo / "requirements.txt").write_text("lmrbench-absent-faiss==1.7.0\n")
    result = suggest(repo, pdf, sandbox=local, top=10, commands=["python examples/train.py"])
    assert result.candidates[0].function.ref == target_ref(DPO)  # ranked all the same
    assert all(not c.calls.calls for c in result.candidates) and result.runs == []
    assert result.no_calls.startswith("ranked without calls: the repository's environment cannot be had")
    assert "lmrbench-absent-faiss" in result.no_calls
