"""Verdicts right both ways: candidates as agents write them, no-code answers, the export's task list, stale
candidates, PEP 263 goal files and the local runner's weaker evidence."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from helpers.llm_server import LLMServer
from helpers.run_task import GOAL, METRICS_PY, REPO, golden_def, write_taskset
from helpers.small_task import LEGACY_SCALE
from lmrbench.authoring.task.mask import mask_source
from lmrbench.benchmark.execution.sandboxes import get_sandbox
from lmrbench.benchmark.pipeline.agent import export_agent, import_agent
from lmrbench.benchmark.pipeline.evaluate import evaluate
from lmrbench.benchmark.pipeline.generate import generate
from lmrbench.benchmark.pipeline.judge import judge
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMConfig
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.core.source.candidate_splice import splice_candidate
from lmrbench.core.taskset import Task, load_taskset
from lmrbench.errors import LmrError
from lmrbench.schemas.run import JudgeCategory, LLMParams

MASKED = mask_source(METRICS_PY, ["dice", "Scaler.apply", "total"], file=GOAL)

AGENT_DICE = '''"""Metrics and a scaler of the toy paper."""

from typing import Iterable, Set
import math

SMOOTH = 0.0


def _as_set(xs: Iterable[int]) -> Set[int]:
    return set(xs)


def _norm(xs):
    return -1.0  # an edit of an existing helper: never taken


# The paper's Equation 3.
def dice(a: Iterable[int], b: Iterable[int]) -> float:
    """Dice coefficient of two sets."""
    a, b = _as_set(a), _as_set(b)
    if not a and not b:
        return 1.0
    return (2 * len(a & b) + SMOOTH) / (len(a) + len(b) + SMOOTH)


if __name__ == "__main__":
    print(dice([1], [1]))
'''


def test_a_candidate_keeps_new_imports_helpers_and_constants_but_no_existing_definition() -> None:
    out = splice_candidate(MASKED, AGENT_DICE, ["dice"], file=GOAL)
    assert out.kept == ["from typing import Iterable, Set", "SMOOTH = 0.0", "def _as_set"]
    namespace: dict[str, object] = {}
    exec(compile(out.source, GOAL, "exec"), namespace)  # noqa: S102 (the test's own code)
    assert namespace["dice"]([1, 2, 3], [2, 3, 4]) == 4 / 6  # type: ignore[operator]
    assert namespace["_norm"]([3, 4]) == 5.0  # type: ignore[operator]  # the pristine helper
    assert "__main__" not in out.source and "import math\n" in out.source and out.source.count("import math") == 1
    assert splice_candidate(MASKED, out.source, ["dice"], file=GOAL).source == out.source  # evaluation re-splices
    # an import that rebinds an existing name is left out; the part binding new names is kept
    mixed = "from math import sqrt as _norm, pi\n\n" + AGENT_DICE
    assert splice_candidate(MASKED, mixed, ["dice"], file=GOAL).kept[0] == "from math import pi"


AGENT_SCALER = '''class Scaler:
  """An agent's edit, indented by two spaces."""

  EPS = 0.0

  def __init__(self, target):
    self.target = -1  # an edit of an existing method: never taken

  @staticmethod
  def _norm_of(xs):
    return sum(x * x for x in xs) ** 0.5 + Scaler.EPS

  def apply(self, xs):
    n = self._norm_of(xs)
    return [x * self.target / n for x in xs]
'''


def test_a_candidate_keeps_the_new_methods_and_constants_of_the_goal_method_s_class() -> None:
    out = splice_candidate(MASKED, AGENT_SCALER, ["Scaler.apply"], file=GOAL)
    assert out.kept == ["Scaler.EPS = 0.0", "def Scaler._norm_of"]
    namespace: dict[str, object] = {}
    exec(compile(out.source, GOAL, "exec"), namespace)  # noqa: S102 (the test's own code)
    assert namespace["Scaler"](10).apply([3, 4]) == [6.0, 8.0]  # type: ignore[operator]  # pristine __init__
    assert "\n    @staticmethod\n    def _norm_of(xs):\n" in out.source  # at the class's own indentation
    assert splice_candidate(MASKED, out.source, ["Scaler.apply"], file=GOAL).source == out.source
    # a candidate without the helper it calls is spliced as it is, and fails when it runs
    bare = splice_candidate(MASKED, AGENT_SCALER.replace("  EPS = 0.0\n", ""), ["Scaler.apply"], file=GOAL)
    assert bare.kept == ["def Scaler._norm_of"]


def _scaler_agent(tmp_path: Path, scale: str) -> dict[int, str]:
    """Task 1-Toy exported to an agent who writes ``Scaler.apply`` with a helper method of its own (``scale``: the
    factor it applies), imported and evaluated; the status of each implementation."""
    bench = write_taskset(tmp_path / "bench")
    tasks, _ = load_taskset(bench, only=["1"])
    out = export_agent(tasks, tmp_path / "agent")
    goal = out / "1-Toy" / REPO / GOAL
    head, _, tail = goal.read_text().partition("class Scaler:")
    cls, _, rest = tail.partition("\n\n\nasync def total")
    helper = f"    def _factor(self, xs):\n        return {scale}\n\n    def apply(self, xs):"
    cls = cls.replace("    def apply(self, xs):", helper).replace(
        "raise NotImplementedError", "return [x * self._factor(xs) for x in xs]")
    goal.write_text(head + "class Scaler:" + cls + "\n\n\nasync def total" + rest)
    import_agent(tasks, out, tmp_path / "run")
    evaluate(tasks, tmp_path / "run", get_sandbox("local"), timeout=120)
    return {r.impl: r.status for r in RunDir(tmp_path / "run").results() if r.task == "1-Toy"}


def test_an_agent_s_helper_method_is_kept_and_graded_both_ways(tmp_path: Path) -> None:
    assert _scaler_agent(tmp_path / "right", "self.target / _norm(xs)")[2] == "passed"
    assert _scaler_agent(tmp_path / "wrong", "1 / _norm(xs)")[2] == "failed"  # the target ignored


def test_a_latin1_goal_file_with_a_coding_line_is_read_and_written_in_its_encoding(tmp_path: Path) -> None:
    from lmrbench.core.source.tree import read_source
    from lmrbench.pyparse import encode_source

    text = "# -*- coding: latin-1 -*-\nNAME = 'café'\n\n\ndef f():\n    raise NotImplementedError\n"
    path = tmp_path / "latin.py"
    path.write_bytes(text.encode("latin-1"))
    assert read_source(path, path) == text
    out = splice_candidate(text, text.replace("raise NotImplementedError", "return 'été'"), ["f"], file="latin.py")
    assert encode_source(out.source) == out.source.encode("latin-1")
    (tmp_path / "plain.py").write_bytes("NAME = 'café'\n".encode("latin-1"))
    with pytest.raises(LmrError, match="plain.py: not UTF-8"):
        read_source(tmp_path / "plain.py", tmp_path / "plain.py")


def _client(server: LLMServer, tmp_path: Path, model: str) -> LLMClient:
    params = LLMParams(model=model, base_url=server.base_url, max_tokens=256)
    return LLMClient(LLMConfig(params=params, cache_dir=None, max_retries=0))


def test_no_usable_code_is_logically_incorrect_without_a_request(server: LLMServer, tmp_path: Path) -> None:
    bench = write_taskset(tmp_path / "bench")
    server.on("Functions to implement, in toy/metrics.py: dice", "I cannot do this.")
    server.on("Functions to implement, in toy/metrics.py: Scaler.apply", "```python\ndef apply(self, xs:\n```")
    server.on("Functions to implement, in toy/metrics.py: total", golden_def("total"))
    tasks, _ = load_taskset(bench)
    with _client(server, tmp_path, "gen") as c:
        generate(tasks, tmp_path / "run", c)
    cc = {"category": "Completely Correct", "rationale": ["Same."]}  # by name: the numbering is the prompt's
    server.on("Implement total as in the paper.", json.dumps(cc))
    before = len(server.requests)
    with _client(server, tmp_path, "judge") as c:
        summary = judge(tasks, tmp_path / "run", c)
    assert summary.statuses == {"logically_incorrect": 2, "completely_correct": 1}
    assert len(server.requests) - before == 1  # only the candidate with code was sent
    verdict = RunDir(tmp_path / "run").verdict("judge", "1-Toy", 2)
    assert verdict is not None and verdict.category is JudgeCategory.LOGICALLY_INCORRECT
    assert verdict.rationale[0].startswith("no usable code (parse_error)")


def test_import_agent_grades_only_the_exported_tasks_when_asked_and_says_so(tmp_path: Path) -> None:
    bench = write_taskset(tmp_path / "bench")
    tasks, _ = load_taskset(bench)
    out = export_agent(tasks, tmp_path / "agent")
    export_agent([t for t in tasks if t.name == "2-Async"], out, replace=True)
    summary = import_agent(tasks, out, tmp_path / "run", only_exported=True)
    assert summary.statuses == {"ok": 1}  # 1-Toy was not exported: with --only-exported it is not graded
    assert summary.notes == ["not exported, not graded (--only-exported): 1-Toy"]
    assert [(c.task, c.impl) for c in RunDir(tmp_path / "run").candidates()] == [("2-Async", 1)]


def _agent_run(tmp_path: Path, edit: Callable[[str], str]) -> tuple[list[Task], RunDir]:
    """Task 2-Async exported to an agent, whose goal file ``edit`` turns into the agent's, imported as a run."""
    bench = write_taskset(tmp_path / "bench")
    tasks, _ = load_taskset(bench, only=["2"])
    out = export_agent(tasks, tmp_path / "agent")
    goal = out / "2-Async" / REPO / GOAL
    goal.write_text(edit(goal.read_text()))
    import_agent(tasks, out, tmp_path / "run")
    return tasks, RunDir(tmp_path / "run")


def _summing(masked: str) -> str:
    return masked.replace("raise NotImplementedError", "return sum(xs)")


def test_a_candidate_edited_after_evaluation_is_graded_again(tmp_path: Path) -> None:
    tasks, _ = _agent_run(tmp_path, _summing)
    sandbox = get_sandbox("local")
    first = evaluate(tasks, tmp_path / "run", sandbox, timeout=120)
    assert first.statuses == {"passed": 1} and first.weaker == 1
    assert "1 on weaker evidence" in first.line()
    result = RunDir(tmp_path / "run").result("2-Async", 1)
    assert result is not None and result.weaker_evidence and result.sandbox == "local"
    cand_file = RunDir(tmp_path / "run").candidate_dir("2-Async", 1) / REPO / GOAL
    cand_file.write_text(cand_file.read_text().replace("return sum(xs)", "return 0"))
    again = evaluate(tasks, tmp_path / "run", sandbox, timeout=120)
    assert again.statuses == {"failed": 1} and again.skipped == 0


def test_untrusted_code_never_falls_back_to_the_local_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")  # no engine answers
    with pytest.raises(LmrError, match="pass --sandbox local"):
        get_sandbox(None, untrusted=True)
    assert get_sandbox(None).name == "local"  # trusted code (authoring, validation) still falls back
    assert get_sandbox("local", untrusted=True).name == "local"


LEGACY_READS = LEGACY_SCALE.replace(
    "        if scale([1, 2, 3], 2) == [2, 4, 6] and scale([], 3) == []:",
    "        expected = json.loads((Path(__file__).resolve().parent.parent / 'tensors' / 'scaled.json').read_text())\n"
    "        if scale([1, 2, 3], 2) == expected:",
).replace("import logging\n", "import json\nimport logging\n", 1).replace("unit_test_3.log", "unit_test_2.log")

PYTEST_READS = '''import json
from pathlib import Path

from calc import add


def test_add_recorded():
    assert add(2, 3) == json.loads(Path("expected_add.json").read_text())
'''


def test_validate_marks_the_data_the_tests_read_trusted_wherever_it_lies(tmp_path: Path) -> None:
    """Script-style (official) and pytest tests, reading data at the repository root and in tensors/."""
    from helpers.small_task import write_task as write_calc
    from lmrbench.benchmark.validation.plan import ValidateOptions
    from lmrbench.benchmark.validation.taskset import validate_taskset

    bench = tmp_path / "bench"
    task = write_calc(bench, tests={"unit_test/unit_test_1.py": PYTEST_READS, "unit_test/unit_test_2.py": LEGACY_READS},
                      dockerfile=False)  # fmt: skip
    (task / "calc" / "tensors").mkdir()
    (task / "calc" / "tensors" / "scaled.json").write_text("[2, 4, 6]")
    (task / "calc" / "expected_add.json").write_text("5")
    summary = validate_taskset(bench, sandbox=get_sandbox("local"),
                               options=ValidateOptions(repeat=1, max_mutants=0, timeout=120))  # fmt: skip
    assert all(r.valid for r in summary.rows), summary.rows
    impls = json.loads((task / "info.json").read_text())["implementations"]
    assert [i.get("trusted_files") for i in impls] == [["expected_add.json"], ["tensors/scaled.json"]]
    tasks, _ = load_taskset(bench)
    export = export_agent(tasks, tmp_path / "export")
    held = {p.relative_to(export).as_posix() for p in export.rglob("*") if p.is_file()}
    assert not {h for h in held if h.endswith(("scaled.json", "expected_add.json"))}, held
    again = validate_taskset(bench, sandbox=get_sandbox("local"),
                             options=ValidateOptions(repeat=1, max_mutants=0, timeout=120))  # fmt: skip
    assert all(r.valid for r in again.rows) and json.loads((task / "info.json").read_text())["implementations"] == impls


OFFSET_GOLDEN = '''"""Addition shifted by the offset the paper's data fixes."""

import json
from pathlib import Path

OFFSET = json.loads((Path(__file__).parent / "data" / "offset.json").read_text())


def add(a, b):
    """a + b + the offset."""
    return a + b + OFFSET
'''

OFFSET_TEST = '''import json
from pathlib import Path

from calc import add

OFFSET = json.loads(Path("data/offset.json").read_text())


def test_add_recorded():
    assert add(2, 3) - OFFSET == json.loads(Path("expected_add.json").read_text()) - OFFSET
'''


def test_a_file_the_golden_code_reads_itself_is_not_hidden_from_the_code_for_being_read_by_the_tests(
        tmp_path: Path) -> None:
    """The tests read the goal's own data file too: only the answer file becomes trusted, and the golden still
    passes on the next validate, as a right candidate does."""
    from helpers.tasks import Impl
    from helpers.tasks import write_task as write_folder
    from lmrbench.benchmark.validation.plan import ValidateOptions
    from lmrbench.benchmark.validation.taskset import validate_taskset

    bench = tmp_path / "bench"
    task = write_folder(bench, "1-Offset", repo="calc", goal_file="calc.py",
                        goal=mask_source(OFFSET_GOLDEN, ["add"], file="calc.py"), golden=OFFSET_GOLDEN,
                        impls=[Impl("add", "unit_test/unit_test_1.py", "Add with the offset.")],
                        files={"unit_test/unit_test_1.py": OFFSET_TEST, "data/offset.json": "7",
                               "expected_add.json": "12"}, info={"paper_name": "Offset"})  # fmt: skip
    options = ValidateOptions(repeat=1, max_mutants=0, timeout=120)
    first = validate_taskset(bench, sandbox=get_sandbox("local"), options=options)
    assert all(r.valid for r in first.rows), first.rows
    [impl] = json.loads((task / "info.json").read_text())["implementations"]
    assert impl["trusted_files"] == ["expected_add.json"]
    again = validate_taskset(bench, sandbox=get_sandbox("local"),
                             options=ValidateOptions(repeat=1, max_mutants=0, timeout=120, force=True))
    assert all(r.valid for r in again.rows), again.rows


DAEMON_TOTAL = '''async def total(xs):
    import os
    import time
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            time.sleep(3)
            text = open(RESULT).read().replace('"failed"', '"passed"')
            open(RESULT, "w").write(text)
        os._exit(0)
    return -1
'''


def test_on_the_local_runner_no_daemon_rewrites_a_result_after_evaluate(tmp_path: Path) -> None:
    import time

    target = RunDir(tmp_path / "run").result_path("2-Async", 1)
    tasks, run = _agent_run(tmp_path, lambda masked: masked.partition("async def total")[0]
                            + f"RESULT = {str(target)!r}\n\n\n" + DAEMON_TOTAL)  # fmt: skip
    summary = evaluate(tasks, run.path, get_sandbox("local", untrusted=True), timeout=120)
    assert summary.statuses == {"failed": 1} and summary.weaker == 1
    before = run.result_path("2-Async", 1).read_bytes()
    time.sleep(4)  # the daemon would have written by now
    assert run.result_path("2-Async", 1).read_bytes() == before
    result = run.result("2-Async", 1)
    assert result is not None and result.status.value == "failed" and result.weaker_evidence


PEEKING_TOTAL = '''async def total(xs):
    import os
    seen = []
    for path in (os.path.join(os.getcwd(), "..", "..", "trusted", "repo", "unit_test", "unit_test_1.py"), TASK_TEST):
        try:
            seen.append(open(path).read())
        except OSError:
            pass
    return sum(xs) if seen else -1  # right only when it could read the tests
'''


def test_on_the_local_runner_the_candidate_cannot_read_the_tests(tmp_path: Path) -> None:
    test_file = tmp_path / "bench" / "2-Async" / REPO / "unit_test" / "unit_test_1.py"
    tasks, _ = _agent_run(tmp_path, lambda masked: masked.partition("async def total")[0]
                          + f"TASK_TEST = {str(test_file)!r}\n\n\n" + PEEKING_TOTAL)  # fmt: skip
    evaluate(tasks, tmp_path / "run", get_sandbox("local", untrusted=True), timeout=120)
    result = RunDir(tmp_path / "run").result("2-Async", 1)
    assert result is not None and result.status.value == "failed", result


LATIN_GOLDEN = """# -*- coding: latin-1 -*-
\"\"\"Greetings of the toy paper (this file is Latin-1).\"\"\"

SALUTATION = "Grüße"


def greet(name):
    return SALUTATION + ", " + name
"""

TEST_GREET = """from toy.greet import greet


def test_greet():
    assert greet("Zoë") == "Grüße, Zoë"
"""


def test_a_latin1_goal_file_is_imported_and_evaluated_in_its_encoding(tmp_path: Path) -> None:
    from helpers.tasks import Impl, write_task

    bench = tmp_path / "bench"
    goal = "toy/greet.py"
    task = write_task(bench, "1-Greet", repo=REPO, goal_file=goal, goal=mask_source(LATIN_GOLDEN, ["greet"], file=goal),
                      golden=LATIN_GOLDEN, impls=[Impl("greet", "unit_test/unit_test_1.py")],
                      files={"toy/__init__.py": "", "unit_test/unit_test_1.py": TEST_GREET})  # fmt: skip
    for path in (task / REPO / goal, task / "golden_files" / "greet_golden.py"):
        path.write_bytes(path.read_text("utf-8").encode("latin-1"))
    tasks, problems = load_taskset(bench)
    assert not problems
    out = export_agent(tasks, tmp_path / "agent")
    agent_goal = out / "1-Greet" / REPO / goal
    text = agent_goal.read_bytes().decode("latin-1")
    agent_goal.write_bytes(text.replace("raise NotImplementedError", 'return SALUTATION + ", " + name  # «fait»')
                           .encode("latin-1"))  # fmt: skip
    summary = import_agent(tasks, out, tmp_path / "run")
    assert summary.statuses == {"ok": 1}, summary.problems
    written = (RunDir(tmp_path / "run").candidate_dir("1-Greet", 1) / REPO / goal).read_bytes()
    assert "«fait»".encode("latin-1") in written and "Grüße".encode("latin-1") in written
    evaluate(tasks, tmp_path / "run", get_sandbox("local", untrusted=True), timeout=120)
    result = RunDir(tmp_path / "run").result("1-Greet", 1)
    assert result is not None and result.status.value == "passed", result


def test_evaluate_without_docker_names_the_fix_and_with_sandbox_local_warns(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    _agent_run(tmp_path, _summing)
    bench = tmp_path / "bench"
    script = Path(sys.executable).with_name("lmrbench")
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent/docker.sock"}  # no engine answers
    argv = [str(script), "evaluate", str(bench), str(tmp_path / "run"), "--task", "2"]
    refused = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert "pass --sandbox local" in refused.stderr and RunDir(tmp_path / "run").result("2-Async", 1) is None
    local = subprocess.run([*argv, "--sandbox", "local"], capture_output=True, text=True, env=env, timeout=300)
    assert local.returncode == 0, local.stderr
    assert "every result is weaker evidence" in local.stdout + local.stderr
    assert "evaluate: 1 passed, 1 on weaker evidence" in local.stdout
