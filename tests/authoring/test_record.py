"""Recording real calls of a fixture repo's training script in a real sandbox, and running the tests."""

from __future__ import annotations

import json
import subprocess

import pytest

from helpers.record_fixture import make_task
from helpers.tasks import tagged
from lmrbench.authoring.record.generated_file import file_status
from lmrbench.authoring.record.record import record_tests
from lmrbench.authoring.record.recorded_tests import scaffold_tests
from lmrbench.authoring.record.testgen import TODO_MARK
from lmrbench.benchmark.sandbox.running.local import LocalRunner
from lmrbench.core.taskset import load_task
from lmrbench.errors import LmrError
from lmrbench.harness.request import SandboxRequest
from lmrbench.harness.sandbox import Sandbox
from lmrbench.harness.variant import evaluate_variant
from lmrbench.runtime.lmrbench_values import read_case_file
from lmrbench.schemas.recording import RecordingIndex
from lmrbench.schemas.task_info import CheckerSettings, load_task_info, save_task_info
from lmrbench.schemas.testrun import TestStatus

TRAIN = "python train.py --steps 3"


@pytest.fixture(scope="module")
def local():
    return Sandbox(LocalRunner())


def _outcomes(sandbox, task, variant):
    report = evaluate_variant(sandbox, task, task.info.implementation(1), tagged(variant), timeout=300)
    return report.status, {c.test_id.rpartition("::")[2]: c.outcome for c in report.cases}


def _snapshot(task):
    unit = task.repo_dir / "unit_test"
    return {p.relative_to(unit).as_posix(): p.read_bytes() for p in unit.rglob("*") if p.is_file()}


def test_recorded_test_passes_on_golden_and_fails_on_masked(tmp_path, local):
    task = make_task(tmp_path)
    result = record_tests(task, 1, TRAIN, sandbox=local)

    # two calls of each value of the flag reduce, then a case with margin varied together with reduce, then the
    # scan's inputs where the clamp binds (the body clamps at 0: scores of zero, all equal), then the input the
    # search found, on the last recorded call, for the mutant no recorded call kills (the clamp dropped: every
    # recorded margin term is positive; a margin of zero makes some negative)
    assert [c.test for c in result.cases] == [f"test_case_{n}" for n in range(1, 9)]
    assert [c.amplified for c in result.cases] == ["", "", "", "", "margin=2.0, reduce=False",
                                                   "scores all zero (or a row of it)", "scores all equal",
                                                   "margin=0.0"]
    index = RecordingIndex.model_validate_json((result.data_dir / "index.json").read_text())
    assert index.command == TRAIN and [c.file for c in index.cases] == [f"case_{n}.npz" for n in range(1, 9)]
    guard = next(m for m in index.mutants if m.kind == "drop_guard")
    assert guard.killed and guard.search is not None and guard.search.outcome == "killed"
    assert [(s.searched, s.killed, s.live) for s in index.search] == [(1, 1, 0)]
    # the second call passed margin positionally and reduce=False: bound by name, per-example result kept
    case, arrays = read_case_file(result.data_dir / "case_2.npz")
    assert [(a["name"], a["kind"]) for a in case["arguments"]] == [
        ("scores", "positional_or_keyword"),
        ("labels", "positional_or_keyword"),
        ("margin", "positional_or_keyword"),
        ("reduce", "keyword_only"),
    ]
    assert case["arguments"][2]["value"] == 0.5 and arrays[case["expected"]["key"]].shape == (8,)
    info = load_task_info(task.path)
    assert info.implementation(1).unit_test_file == "unit_test/unit_test_1.py"
    assert info.implementation(1).checker is not None and info.implementation(1).checker.kind == "numeric"
    assert file_status(result.test_file) == "generated"

    status, cases = _outcomes(local, task, "golden")
    assert status == TestStatus.PASSED and cases == dict.fromkeys([f"test_case_{n}" for n in range(1, 9)], "passed")
    status, cases = _outcomes(local, task, "masked")
    assert status == TestStatus.FAILED and set(cases.values()) == {"failed"}


def test_method_records_the_instance_and_what_the_call_changed(tmp_path, local):
    task = make_task(tmp_path, "model/losses.py::Scaler.update")
    result = record_tests(task, 1, TRAIN, sandbox=local)
    assert all(c.binding == "method" and c.state_changed for c in result.cases)
    case, _ = read_case_file(result.data_dir / "case_2.npz")
    assert [k for k, _ in case["self"]["items"]] == ["mean", "var", "momentum"]
    text = result.test_file.read_text()
    assert "scaler = case.instance(Scaler)" in text and "case.attributes_of(scaler)" in text
    assert _outcomes(local, task, "golden")[0] == TestStatus.PASSED
    assert _outcomes(local, task, "masked")[0] == TestStatus.FAILED


def test_random_calls_keep_the_random_state_and_replay_exactly(tmp_path, local):
    task = make_task(tmp_path, "model/losses.py::dropout")
    result = record_tests(task, 1, TRAIN, sandbox=local, max_calls=2)
    assert [c.random_state for c in result.cases if not c.amplified] == [True, True]
    # a case the search adds from a call that draws random numbers keeps its random state too
    assert all(c.random_state for c in result.cases)
    assert result.test_file.read_text().count("case.restore_random_state()") == len(result.cases)
    assert _outcomes(local, task, "golden")[0] == TestStatus.PASSED


def test_identical_calls_are_kept_once(tmp_path, local):
    driver = """
        import numpy as np
        from model.losses import hinge_loss
        s, y = np.array([0.5, -1.0]), np.array([1.0, -1.0])
        for _ in range(4):
            hinge_loss(s, y)
        hinge_loss(s * 2, y)
        hinge_loss(s, y)
    """
    task = make_task(tmp_path, extra={"again.py": driver})
    result = record_tests(task, 1, "python again.py", sandbox=local, max_calls=5, probe=False)
    assert len(result.cases) == 2 and len({c.digest for c in result.cases}) == 2


def test_a_failing_command_says_its_exit_code_and_output_and_writes_nothing(tmp_path, local):
    task = make_task(tmp_path)
    before = _snapshot(task)
    with pytest.raises(LmrError, match=r"exit code 3; output tail: .*disk on fire"):
        record_tests(task, 1, "python -c \"import sys; print('disk on fire'); sys.exit(3)\"", sandbox=local)
    assert _snapshot(task) == before
    assert load_task_info(task.path).implementation(1).checker is None


def test_a_goal_function_never_called_is_named_with_the_command(tmp_path, local):
    task = make_task(tmp_path)
    with pytest.raises(LmrError, match=r"hinge_loss was never called by `python -c 'import model.losses'`"):
        record_tests(task, 1, "python -c 'import model.losses'", sandbox=local)
    with pytest.raises(LmrError, match=r"never imported model/losses.py"):
        record_tests(task, 1, "python -c 'pass'", sandbox=local)


def test_a_value_that_cannot_be_saved_names_the_argument_and_its_type(tmp_path, local):
    driver = """
        import numpy as np
        from model.losses import hinge_loss

        class Margin(float):
            pass

        hinge_loss(np.ones(2), np.ones(2), margin={"m": Margin(1.0)})
    """
    task = make_task(tmp_path, extra={"odd.py": driver})
    before = _snapshot(task)
    with pytest.raises(
        LmrError, match=r"`margin\['m'\]` is a __main__\.Margin, which cannot be saved faithfully"
    ):
        record_tests(task, 1, "python odd.py", sandbox=local)
    assert _snapshot(task) == before


def test_a_call_over_the_size_limit_is_named(tmp_path, local):
    task = make_task(tmp_path)
    with pytest.raises(
        LmrError,
        match=r"hinge_loss: call 1 needs \d+ bytes .* over the limit of 100 bytes per call \(largest part",
    ):
        record_tests(task, 1, TRAIN, sandbox=local, max_bytes=100)


def test_a_non_deterministic_function_is_reported(tmp_path, local):
    extra = {
        "model/noisy.py": """
            import os

            def jitter(x):
                return x + int.from_bytes(os.urandom(4), "little")
        """,
        "noisy_run.py": "from model.noisy import jitter\nprint(jitter(1.0))\n",
    }
    task = make_task(tmp_path, "model/noisy.py::jitter", extra=extra)
    with pytest.raises(LmrError, match=r"jitter is non-deterministic: call 1 .* draws no random numbers"):
        record_tests(task, 1, "python noisy_run.py", sandbox=local)


def test_an_edited_test_is_never_replaced_without_force(tmp_path, local):
    task = make_task(tmp_path)
    result = record_tests(task, 1, TRAIN, sandbox=local, max_calls=1)
    edited = result.test_file.read_text().replace("def test_case_1", "def test_case_one")
    result.test_file.write_text(edited)
    before = _snapshot(task)
    with pytest.raises(LmrError, match=r"unit_test_1.py: the test file was edited by hand; pass --force"):
        record_tests(task, 1, TRAIN, sandbox=local, max_calls=2)
    assert _snapshot(task) == before
    again = record_tests(task, 1, TRAIN, sandbox=local, max_calls=2, force=True, probe=False)
    assert len(again.cases) == 2 and file_status(again.test_file) == "generated"


def test_rerecording_replaces_only_that_implementation(tmp_path, local):
    task = make_task(tmp_path, "model/losses.py::hinge_loss", "model/losses.py::dropout")
    record_tests(task, 1, TRAIN, sandbox=local)
    second = record_tests(task, 2, TRAIN, sandbox=local, max_calls=1)
    impl2 = {p.name: p.read_bytes() for p in second.data_dir.iterdir()}
    test2 = second.test_file.read_bytes()
    first = record_tests(task, 1, TRAIN, sandbox=local, max_calls=1, probe=False)
    assert sorted(p.name for p in first.data_dir.iterdir()) == ["case_1.npz", "index.json"]
    assert {p.name: p.read_bytes() for p in second.data_dir.iterdir()} == impl2
    assert second.test_file.read_bytes() == test2


def test_scaffold_writes_call_shapes_marked_todo(tmp_path):
    task = make_task(tmp_path, "model/losses.py::Scaler.update")
    path = scaffold_tests(task, 1)
    text = path.read_text()
    compile(text, str(path), "exec")
    assert text.count("def test_case_") == 3 and TODO_MARK in text
    assert "scaler = Scaler(...)" in text and "result = scaler.update(batch=batch)" in text
    assert "from model.losses import Scaler" in text
    info = json.loads((task.path / "info.json").read_text())
    assert info["implementations"][0]["unit_test_file"] == "unit_test/unit_test_1.py"


FACTORY_EXTRA = {
    "model/head.py": """
        import numpy as np


        class Head:
            def __init__(self, dim):
                self.w = np.linspace(-1.0, 1.0, dim)
                self.log = print  # not a value: the factory has to provide it

            def forward(self, x):
                return np.tanh(x @ self.w)


        def make_head():
            return Head(3)
    """,
    "head_run.py": """
        import numpy as np
        from model.head import Head

        head = Head(3)
        head.w = head.w * 2
        print(head.forward(np.ones((2, 3))))
    """,
}


def test_an_instance_with_unsaveable_attributes_needs_a_factory(tmp_path, local):
    task = make_task(tmp_path, "model/head.py::Head.forward", extra=FACTORY_EXTRA)
    with pytest.raises(LmrError, match=r"`self.log` is a builtin_function_or_method, .* --self-factory"):
        record_tests(task, 1, "python head_run.py", sandbox=local)
    result = record_tests(task, 1, "python head_run.py", sandbox=local, self_factory="model.head:make_head")
    case, arrays = read_case_file(result.data_dir / "case_1.npz")
    assert case["skipped_state"] == ["log"] and [k for k, _ in case["self"]["items"]] == ["w"]
    assert "head = case.instance(Head, factory=make_head)" in result.test_file.read_text()
    assert _outcomes(local, task, "golden")[0] == TestStatus.PASSED
    assert _outcomes(local, task, "masked")[0] == TestStatus.FAILED


def test_a_goal_file_run_as_the_main_script_is_explained(tmp_path, local):
    script = "def hinge_loss(x):\n    return x\n\n\nhinge_loss(1)\n"
    task = make_task(tmp_path, extra={"model/losses.py": script})
    with pytest.raises(LmrError, match=r"runs model/losses.py as the main script; record through a script"):
        record_tests(task, 1, "python model/losses.py", sandbox=local)


def test_a_checker_that_rejects_the_reference_result_is_refused(tmp_path, local):
    task = make_task(tmp_path)
    task.info.implementation(1).checker = CheckerSettings(kind="unordered")
    save_task_info(task.info, task.path)
    task = load_task(task.path)
    with pytest.raises(
        LmrError,
        match=r"the checker in info.json rejects the reference code's own result of call 1 "
        r"\(result: expected a collection, got 1\.0\)",
    ):
        record_tests(task, 1, TRAIN, sandbox=local)


def test_cases_cover_each_setting_before_repeating_one(tmp_path, local):
    driver = """
        import numpy as np
        from model.losses import hinge_loss
        for step in range(6):
            hinge_loss(np.full(3, step / 10), np.ones(3), margin=1.0)
        hinge_loss(np.ones(3), np.ones(3), margin=0.25)
    """
    task = make_task(tmp_path, extra={"sweep.py": driver})
    old = record_tests(task, 1, "python sweep.py", sandbox=local, max_calls=2, probe=False)
    assert [c.arguments["margin"] for c in old.cases] == ["1.0", "0.25"]
    result = record_tests(task, 1, "python sweep.py", sandbox=local, max_calls=2, force=True)
    recorded = [c for c in result.cases if not c.amplified]
    assert {c.arguments["margin"] for c in recorded} == {"1.0", "0.25"}
    # reduce was always True: cases with reduce=False are added, the golden code giving their results, and
    # margin (combined with reduce in the body) varied with it; only then is the flag tried on a second call
    assert [c.amplified for c in result.cases if c.amplified][:4] == [
        "reduce=False", "margin=0.5, reduce=False", "margin=2.0, reduce=False", "reduce=False"]
    found = [ln for ln in result.summary if ln.startswith(("added a case the search found",
                                                            "added a case no recorded call gives"))]
    assert len([c for c in result.cases if c.amplified]) == 4 + len(found)
    assert "reduce was always True in the recording; added 2 case(s) with reduce False" in result.summary


def test_an_implementation_of_several_functions_gets_a_test_per_function_and_case(tmp_path, local):
    task = make_task(tmp_path, "model/losses.py::hinge_loss", "model/losses.py::dropout")
    first = task.info.implementation(1)
    first.goal_function = ["hinge_loss", "dropout"]
    task.info.implementations = [first]
    save_task_info(task.info, task.path)
    task = load_task(task.path)
    result = record_tests(task, 1, TRAIN, sandbox=local, max_calls=2, probe=False)
    assert [c.test for c in result.cases] == [
        "test_hinge_loss_case_1",
        "test_hinge_loss_case_2",
        "test_dropout_case_1",
        "test_dropout_case_2",
    ]
    assert "from model.losses import dropout, hinge_loss  # noqa: E402" in result.test_file.read_text()
    status, cases = _outcomes(local, task, "golden")
    assert status == TestStatus.PASSED and len(cases) == 4
    assert _outcomes(local, task, "masked")[0] == TestStatus.FAILED


def test_the_sitecustomize_it_shadows_still_runs(tmp_path):
    import sys

    from lmrbench.runtime import RECORD_RUNTIME, runtime_files

    harness, other = tmp_path / "harness", tmp_path / "other"
    harness.mkdir()
    other.mkdir()
    for name, data in runtime_files(RECORD_RUNTIME).items():
        (harness / name).write_bytes(data)
    (other / "sitecustomize.py").write_text("import builtins\nbuiltins.SHADOWED_RAN = True\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{harness}:{other}"}
    probe = "import builtins, sys; print(hasattr(builtins, 'SHADOWED_RAN'), 'lmrbench_record' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert (out.stdout.strip(), out.stderr) == ("True False", "")


def test_one_record_call_gives_a_task_that_validates_with_most_mutants_killed(tmp_path, local):
    from lmrbench.benchmark.validation.plan import ValidateOptions
    from lmrbench.benchmark.validation.store import load_result, result_path
    from lmrbench.benchmark.validation.taskset import validate_taskset

    task = make_task(tmp_path)
    record_tests(task, 1, TRAIN, sandbox=local)
    options = ValidateOptions(repeat=2, timeout=300, max_mutants=12, min_kill_rate=0.8)
    runs = tmp_path / "runs"
    validate_taskset(task.path.parent, only=[task.name], sandbox=local, options=options, run_dir=runs)
    result = load_result(result_path(runs, task.name, 1))
    assert result is not None
    assert result.golden_passed and result.masked_failed and not result.flaky_tests
    assert result.valid, result.reasons
    assert result.kill_rate is not None and result.kill_rate >= 0.8


SCHEDULE = '''
class Schedule:
    """A learning-rate schedule: warm-up, then a tenth of the rate every fifth step."""

    def __init__(self):
        self.step = 0

    def rate(self, base):
        """The rate of the next step."""
        self.step += 1
        if self.step <= 2:
            return base * self.step / 2
        if self.step % 5 == 0:
            return base / 10
        return base
'''


def test_cases_are_picked_to_cover_the_branches_the_objects_state_takes(tmp_path, local):
    driver = """
        from model.sched import Schedule
        s = Schedule()
        for _ in range(12):
            s.rate(0.1)
    """
    task = make_task(tmp_path, "model/sched.py::Schedule.rate", extra={"model/sched.py": SCHEDULE, "run.py": driver})
    result = record_tests(task, 1, "python run.py", sandbox=local, max_calls=3)
    # every call has the same shape; the first three (all warm-up or just after) would leave `base / 10` unrun
    (cov,) = result.coverage
    assert cov.target == "model/sched.py::Schedule.rate"
    assert (cov.lines_covered, cov.lines_total) == (6, 6) and cov.missing_lines == []
    assert cov.branches_total == 4 and cov.branches_covered == 4
    index = RecordingIndex.model_validate_json((result.data_dir / "index.json").read_bytes())
    assert index.coverage == result.coverage
    steps = sorted(read_case_file(result.data_dir / c.file)[0]["self"]["items"][0][1] for c in result.cases)
    assert any(s % 5 == 4 for s in steps) and any(s < 2 for s in steps)
    # with one call asked for, the later calls that reach `base / 10` are still sampled and kept for it
    one = record_tests(task, 1, "python run.py", sandbox=local, max_calls=1, force=True)
    assert one.coverage[0].lines_covered == 6 and one.coverage[0].reached_not_kept == []


PROMPTS = '''
def format_prompt(question, shots):
    """The few-shot prompt."""
    lines = [f"Q: {q}\\nA: {a}" for q, a in shots]
    return "\\n\\n".join(lines + [f"Q: {question}\\nA:"])
'''


def test_text_results_get_the_exact_checker_and_the_test_says_which(tmp_path, local):
    driver = """
        from model.prompts import format_prompt
        print(format_prompt("2+2?", [("1+1?", "2")]))
    """
    task = make_task(tmp_path, "model/prompts.py::format_prompt", category="Prompting & Reasoning",
                     extra={"model/prompts.py": PROMPTS, "run.py": driver})
    result = record_tests(task, 1, "python run.py", sandbox=local)
    text = result.test_file.read_text()
    assert "Checker: exact (every recorded result is text)" in text and "assert_equal(result" in text
    saved = json.loads((task.path / "info.json").read_text())["implementations"][0]["checker"]
    assert saved == {"kind": "exact", "tolerance": "dtype", "rtol": 1e-5, "atol": 1e-8, "text_threshold": 0.9}
    status, _ = _outcomes(local, task, "golden")
    assert status is TestStatus.PASSED
    # a format that is 0.97 similar (one missing space) passes a 0.9 text checker, and fails this test
    cand = tmp_path / "cand" / "model"
    cand.mkdir(parents=True)
    (cand / "prompts.py").write_text(PROMPTS.replace('f"Q: {question}', 'f"Q:{question}'))
    assert (cand / "prompts.py").read_text() != PROMPTS
    status, _ = _outcomes(local, task, tmp_path / "cand")
    assert status is TestStatus.FAILED


def test_scaffold_keeps_a_recording_unless_forced(tmp_path, local):
    task = make_task(tmp_path)
    result = record_tests(task, 1, TRAIN, sandbox=local, max_calls=1)
    before = _snapshot(task)
    with pytest.raises(LmrError, match=r"has a recording .*--force replaces it"):
        scaffold_tests(task, 1)
    assert _snapshot(task) == before
    scaffold_tests(task, 1, force=True)
    assert not result.data_dir.exists() and TODO_MARK in result.test_file.read_text()


def test_pythonpath_set_in_the_command_keeps_recording_on(tmp_path, local):
    task = make_task(tmp_path)
    result = record_tests(task, 1, "PYTHONPATH=. python train.py --steps 3", sandbox=local, max_calls=2,
                          probe=False)
    assert [c.test for c in result.cases] == ["test_case_1", "test_case_2"]


def test_a_call_that_cannot_be_saved_is_skipped_with_a_note(tmp_path, local):
    driver = """
        import numpy as np
        from model.losses import hinge_loss

        class Margin(float):
            pass

        hinge_loss(np.ones(2), np.ones(2), margin=Margin(1.0))
        hinge_loss(np.ones(2), -np.ones(2), margin=0.5)
    """
    task = make_task(tmp_path, extra={"odd.py": driver})
    result = record_tests(task, 1, "python odd.py", sandbox=local, probe=False)
    assert [c.test for c in result.cases] == ["test_case_1"]
    assert len(result.skipped) == 1 and "`margin` is a __main__.Margin" in result.skipped[0]
    status, _ = _outcomes(local, task, "golden")
    assert status == TestStatus.PASSED


def test_the_recorder_and_the_tests_need_no_numpy_in_the_task_image(tmp_path, make_repo, local):
    from helpers.tasks import create_task
    from lmrbench.core.source.tree import build_tree

    repo = tmp_path / "plain"
    make_repo(repo, {
        "geo/__init__.py": "",
        "geo/area.py": "def area(w, h, scale=1.0):\n    return w * h * scale\n",
        "run.py": "from geo.area import area\nprint(area(2.0, 3.5))\nprint(area(1, 2, scale=0.25))\n",
    })
    task = create_task(repo, tmp_path / "bench", ["geo/area.py::area"], instruction="Area.", category="")
    tree = build_tree(task, None, "golden", tmp_path / "tree")
    probe = local.run(SandboxRequest(task, tree, ["python", "-c", "import numpy"], 120))
    assert probe.exit_code != 0 and "No module named 'numpy'" in probe.output
    result = record_tests(task, 1, "python run.py", sandbox=local)
    assert [c.test for c in result.cases] == ["test_case_1", "test_case_2"]
    assert _outcomes(local, task, "golden") == (TestStatus.PASSED, {"test_case_1": "passed",
                                                                     "test_case_2": "passed"})
    assert _outcomes(local, task, "masked")[0] == TestStatus.FAILED
