"""Record a task's unit tests from real calls: run the author's command on the golden code, keep the goal
function's first distinct calls, and write ``unit_test/unit_test_<k>.py`` with its data.

The command runs in the task's own sandbox (Docker image or local venv), in the tree validation evaluates (the
masked repository with every goal function spliced from the golden files), with the recording modules first on
the Python path (see ``runtime/lmrbench_record.py``). Nothing in the task changes until every case is saved
and checked: the data folder is staged and renamed, the test file and info.json are written atomically.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lmrbench.authoring import testgen, values
from lmrbench.authoring.bodycoverage import BodyModel, pick_cases
from lmrbench.core.sandbox import RunResult, Sandbox
from lmrbench.core.taskset import Task
from lmrbench.defaults import UNIT_TEST_DIR
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_bytes, atomic_write_json, atomic_write_text, staging_dir
from lmrbench.progress import NullProgress, Progress, check_cancel
from lmrbench.schemas.recording import BodyCoverage, RecordedCase, RecordingIndex
from lmrbench.schemas.task_info import CheckerSettings, Implementation, save_task_info

DEFAULT_MAX_CALLS = 3
DEFAULT_MAX_BYTES = 20_000_000
"""Largest recorded data of one call (arguments, instance, results, random state)."""
DEFAULT_TIMEOUT = 1800.0
POOL_FACTOR = 4
"""Distinct calls saved per goal function and process, as a multiple of the cases kept (see ``pick_cases``)."""
_TAIL_LINES = 15
RECORD_PRELUDE = r"""LMRBENCH_RECORD_ROOT="$PWD"; export LMRBENCH_RECORD_ROOT
_lmrbench_bin=$(mktemp -d) || exit 125
for _lmrbench_py in python python3; do
    _lmrbench_real=$(command -v "$_lmrbench_py") || continue
    printf '#!/bin/sh
PYTHONPATH="%s${PYTHONPATH:+:$PYTHONPATH}" exec "%s" "$@"
'         "$LMRBENCH_HARNESS" "$_lmrbench_real" > "$_lmrbench_bin/$_lmrbench_py"
    chmod 755 "$_lmrbench_bin/$_lmrbench_py"
done
PATH="$_lmrbench_bin:$PATH"; export PATH
"""
"""Run before the author's command: ``python``/``python3`` become wrappers that put the recorder's harness
first on PYTHONPATH, so ``PYTHONPATH=. python train.py`` (which replaces the variable) still records."""


@dataclass(frozen=True)
class RecordResult:
    """What ``record_tests`` wrote."""

    test_file: Path
    data_dir: Path
    cases: list[RecordedCase]
    coverage: list[BodyCoverage] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Calls left out because a value could not be saved, one line each (the first few)."""

    @property
    def total_bytes(self) -> int:
        """Bytes of all case files."""
        return sum(c.bytes for c in self.cases)


def default_checker(impl: Implementation) -> CheckerSettings:
    """The implementation's checker as asked for in info.json, else numeric (which compares text exactly).

    Every field is set explicitly, so info.json shows the tolerances the tests use.
    """
    chosen = impl.checker if impl.checker is not None else CheckerSettings()
    return CheckerSettings(**chosen.model_dump())


def checker_by_type(impl: Implementation, expected: list[Any]) -> tuple[CheckerSettings, str]:
    """The checker of the generated test and why: the one asked for in info.json, else ``exact`` when every
    recorded result is text (prompt formats, templates: a similarity threshold would pass a wrong format),
    else numeric."""
    if impl.checker is not None:
        return default_checker(impl), "as set in info.json"
    if expected and all(_is_text(node) for node in expected):
        chosen, why = CheckerSettings(kind="exact"), "every recorded result is text"
    else:
        chosen, why = CheckerSettings(), "the recorded results hold numbers"
    return CheckerSettings(**chosen.model_dump()), why  # every field set: info.json shows them all


def _is_text(node: Any) -> bool:
    """True for an encoded value made of strings only (a string, or a collection of strings)."""
    if isinstance(node, str):
        return True
    if isinstance(node, list):
        return bool(node) and all(_is_text(n) for n in node)
    if isinstance(node, dict) and node.get("$") in ("tuple", "namedtuple", "set", "frozenset"):
        return bool(node["items"]) and all(_is_text(n) for n in node["items"])
    if isinstance(node, dict) and node.get("$") == "dict":
        return bool(node["items"]) and all(_is_text(v) for _, v in node["items"])
    return False


def goal_targets(impl: Implementation) -> list[tuple[str, str]]:
    """(goal file, qualname) of each goal function: every function in the one goal file, or pairwise."""
    names = impl.qualnames
    files = impl.goal_files
    if not names or not files:
        raise LmrError(f"implementation {impl.index} names no goal function or goal file")
    if len(files) == 1:
        return [(files[0], n) for n in names]
    if len(files) == len(names):
        return list(zip(files, names, strict=True))
    raise LmrError(
        f"implementation {impl.index} has {len(files)} goal files and {len(names)} goal functions; "
        "give one function per file so that each can be recorded"
    )


def test_file_path(task: Task, impl: Implementation) -> Path:
    """Where the implementation's generated test goes: ``<repo>/unit_test/unit_test_<k>.py``."""
    return task.repo_dir / UNIT_TEST_DIR / f"unit_test_{impl.index}.py"


def record_tests(
    task: Task,
    impl_index: int,
    command: str,
    *,
    sandbox: Sandbox,
    max_calls: int = DEFAULT_MAX_CALLS,
    max_bytes: int = DEFAULT_MAX_BYTES,
    self_factory: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    force: bool = False,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> RecordResult:
    """Run ``command`` on the golden code, record the goal functions' calls, write tests and data."""
    progress = progress or NullProgress()
    impl = task.info.implementation(impl_index)
    targets = goal_targets(impl)
    checker = default_checker(impl)
    if checker.kind not in testgen.CHECKER_KINDS:
        raise LmrError(
            f"unknown checker kind {checker.kind!r}; use one of {', '.join(testgen.CHECKER_KINDS)}",
            task.path / "info.json",
        )
    if max_calls < 1:
        raise LmrError("--max-calls must be at least 1")
    if self_factory is not None and ":" not in self_factory:
        raise LmrError(f"--self-factory {self_factory!r} must look like module:function")
    test_path = test_file_path(task, impl)
    testgen.check_replaceable(test_path, force)
    imports = {f: testgen.goal_import(task.repo_dir, f) for f, _ in targets}
    spec = {
        "targets": [{"file": f, "qualname": q} for f, q in targets],
        "max_calls": max_calls * POOL_FACTOR,
        "max_bytes": max_bytes,
        "factory": self_factory,
        "checker": checker.model_dump(),
    }
    with tempfile.TemporaryDirectory(prefix="lmrbench-record-") as tmp:
        from lmrbench.authoring.tree import build_tree

        tree = build_tree(task, None, "golden", Path(tmp) / "tree")
        out = Path(tmp) / "out"
        out.mkdir()
        check_cancel(cancel)
        progress.start(f"environment of {task.name}", None)
        sandbox.prepare(task, progress=progress, cancel=cancel)
        check_cancel(cancel)
        progress.start(f"running `{command}`", None)
        result = sandbox.run(
            task,
            tree,
            ["sh", "-c", RECORD_PRELUDE + command],
            timeout=timeout,
            env={"LMRBENCH_RECORD_SPEC": json.dumps(spec)},
            out_dir=out,
            harness_files=values.runtime_files(values.RECORD_RUNTIME),
        )
        _check_run(result, command, timeout)
        models = _body_models(task, impl, targets)
        chosen = _collect(out, targets, max_calls, command, models)
        coverage = _coverage(out, chosen, models)
        skipped = skipped_calls(out)
        for line in skipped:
            progress.log(f"note: call skipped: {line}")
        written = _write_all(
            task,
            impl,
            chosen,
            targets,
            imports,
            checker,
            command,
            sandbox.name,
            max_calls,
            self_factory,
            test_path,
            progress,
            coverage,
        )
        return dataclasses.replace(written, skipped=skipped)


def skipped_calls(out: Path) -> list[str]:
    """The notes of calls that could not be saved, over every process of the recording (distinct, in order)."""
    seen: list[str] = []
    for path in sorted(out.glob("summary-*.json")):
        for note in json.loads(path.read_text(encoding="utf-8")).get("skipped", []):
            if note.get("message") not in seen:
                seen.append(str(note.get("message")))
    return seen


def _body_models(task: Task, impl: Implementation, targets: list[tuple[str, str]]) -> dict[str, BodyModel | None]:
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


def _coverage(
    out: Path, chosen: dict[str, list[dict[str, Any]]], models: dict[str, BodyModel | None]
) -> list[BodyCoverage]:
    """Coverage of each target's body by its chosen calls, and what the whole run reached."""
    reached: dict[str, set[tuple[int, int]]] = {}
    for path in out.glob("summary-*.json"):
        for target, arcs in json.loads(path.read_text(encoding="utf-8")).get("reached", {}).items():
            reached.setdefault(target, set()).update(tuple(a) for a in arcs)
    result = []
    for target, calls in chosen.items():
        model = models.get(target)
        if model is None or not model.statements or all(c.get("arcs") is None for c in calls):
            continue
        arcs = set().union(*(model.normalize(c.get("arcs") or []) for c in calls))
        result.append(model.measure(target, arcs, model.normalize(reached.get(target, set()))))
    return result


def _tail(output: str) -> str:
    lines = [ln for ln in output.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-_TAIL_LINES:]) if lines else "(no output)"


def _check_run(result: RunResult, command: str, timeout: float) -> None:
    if result.infra_error:
        raise LmrError(f"the sandbox failed while running `{command}`: {result.infra_error}")
    if result.timed_out:
        raise LmrError(
            f"`{command}` did not finish within {timeout:g} s; output tail: {_tail(result.output)}"
        )
    if result.exit_code != 0:
        raise LmrError(
            f"`{command}` failed with exit code {result.exit_code}; output tail: {_tail(result.output)}"
        )


def _collect(
    out: Path,
    targets: list[tuple[str, str]],
    max_calls: int,
    command: str,
    models: dict[str, BodyModel | None] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """``max_calls`` distinct calls of each target over every process, or LmrError: those that cover most of the
    golden body first (``bodycoverage.pick_cases``), then one of each call shape (see ``pick_cases``)."""
    errors = sorted(out.glob("error-*.json"))
    if errors:
        raise LmrError(json.loads(errors[0].read_text(encoding="utf-8"))["message"])
    lines: list[dict[str, Any]] = []
    for path in out.glob("calls-*.jsonl"):
        lines += [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
    lines.sort(key=lambda d: (d["time"], d["pid"], d["seq"]))
    summaries = [json.loads(p.read_text(encoding="utf-8")) for p in out.glob("summary-*.json")]
    chosen: dict[str, list[dict[str, Any]]] = {}
    for file, qual in targets:
        target = f"{file}::{qual}"
        seen: set[str] = set()
        distinct = []
        for line in lines:
            if line["target"] == target and line["digest"] not in seen:
                seen.add(line["digest"])
                line["path"] = out / line["file"]
                distinct.append(line)
        model = (models or {}).get(target)
        picked = pick_cases(distinct, max_calls, model, lambda c: call_shape(c["path"]))
        if not picked:
            notes = [n["message"] for sm in summaries for n in sm.get("skipped", []) if n.get("target") == target]
            if notes:
                raise LmrError(f"no call could be saved: {notes[0]}")
            raise LmrError(_never_called(target, file, command, summaries))
        for n, line in enumerate(picked, 1):
            if line["replay"] == "raised":
                raise LmrError(
                    f"{target}: call {n} fails when replayed from its recorded inputs "
                    f"({line['replay_detail']}); it reads state that was not recorded (name a factory with "
                    "--self-factory) or is not repeatable"
                )
            if line["replay"] == "checker":
                raise LmrError(
                    f"{target}: the checker in info.json rejects the reference code's own result of call {n} "
                    f"({line['replay_detail']}); set another checker kind for the implementation"
                )
            if line["replay"] == "different":
                why = (
                    "even with the random state restored"
                    if line["drew_random"]
                    else "and draws no random numbers"
                )
                raise LmrError(
                    f"{target} is non-deterministic: call {n} replayed from its recorded inputs gives a "
                    f"different result {why} ({line['replay_detail']})"
                )
        chosen[target] = picked
    return chosen


def call_shape(path: Path) -> str:
    """What tells calls apart for a reader: argument shapes and dtypes, scalar and string values."""
    case, arrays = values.read_case_file(path)
    parts = [f"{a['name']}={values.describe(a['value'], arrays)}" for a in case["arguments"]]
    if case["self"] is not None:
        parts.append(f"self={values.describe(case['self'], arrays)}")
    return "; ".join(parts)


def _never_called(target: str, file: str, command: str, summaries: list[dict[str, Any]]) -> str:
    if any(s.get("main_is_goal") for s in summaries):
        return (
            f"{target} was never recorded: `{command}` runs {file} as the main script; record through a "
            "script that imports it"
        )
    if not any(target in s.get("patched", []) for s in summaries):
        return f"{target} was never called: `{command}` never imported {file}"
    return f"{target} was never called by `{command}`"


def _write_all(
    task: Task,
    impl: Implementation,
    chosen: dict[str, list[dict[str, Any]]],
    targets: list[tuple[str, str]],
    imports: dict[str, testgen.GoalImport],
    checker: CheckerSettings,
    command: str,
    runner: str,
    max_calls: int,
    factory: str | None,
    test_path: Path,
    progress: Progress,
    coverage: list[BodyCoverage] | None = None,
) -> RecordResult:
    unit_dir = task.repo_dir / UNIT_TEST_DIR
    data_dir = unit_dir / "data" / f"impl_{impl.index}"
    single = len(targets) == 1
    cases: list[RecordedCase] = []
    specs: list[testgen.CaseSpec] = []
    expected: list[Any] = []
    with staging_dir(data_dir, replace=True) as stage:
        for file, qual in targets:
            prefix = "" if single else f"{testgen.snake_name(qual.replace('.', '_'))}_"
            for n, line in enumerate(chosen[f"{file}::{qual}"], 1):
                raw = Path(line["path"]).read_bytes()
                case, arrays = values.read_case_file(line["path"])
                name = f"{prefix}case_{n}"
                (stage / f"{name}.npz").write_bytes(raw)
                entry = _case_entry(case, arrays, f"{name}.npz", f"test_{name}", line)
                cases.append(entry)
                expected.append(case["expected"])
                specs.append(
                    testgen.CaseSpec(
                        test=entry.test,
                        file=entry.file,
                        qualname=qual,
                        binding=entry.binding,
                        goal=imports[file],
                        positional=_needs_positional(case),
                        arguments=entry.arguments,
                        returns=entry.returns,
                        changed=entry.changed,
                        state_changed=entry.state_changed,
                        random_state=entry.random_state,
                    )
                )
        checker, why = checker_by_type(impl, expected)
        index = RecordingIndex(
            implementation=impl.index,
            command=command,
            runner=runner,
            recorded_at=datetime.now(UTC),
            max_calls=max_calls,
            checker=checker,
            self_factory=factory,
            cases=cases,
            coverage=coverage or [],
        )
        atomic_write_json(stage / "index.json", index.model_dump(mode="json"))
        for name, data in values.runtime_files(values.TEST_RUNTIME).items():
            atomic_write_bytes(unit_dir / name, data)
        atomic_write_text(
            test_path, testgen.render_recorded_test(impl.index, specs, checker, command, factory, checker_note=why)
        )
    rel = test_path.relative_to(task.repo_dir).as_posix()
    impl.unit_test_file = rel
    impl.checker = checker
    save_task_info(task.info, task.path)
    for c in cases:
        progress.log(f"{c.file}: {c.bytes:,} bytes ({c.target}: {', '.join(c.arguments) or 'no arguments'})")
    return RecordResult(test_file=test_path, data_dir=data_dir, cases=cases, coverage=coverage or [])


def _needs_positional(case: dict[str, Any]) -> bool:
    spread = any(a["kind"] == "var_positional" and a["value"]["items"] for a in case["arguments"])
    return spread or any(a["kind"] == "positional_only" for a in case["arguments"])


def _case_entry(
    case: dict[str, Any], arrays: dict[str, Any], file: str, test: str, line: dict[str, Any]
) -> RecordedCase:
    arguments = {a["name"]: values.describe(a["value"], arrays) for a in case["arguments"]}
    if case["binding"] == "method" and case["self"] is not None:
        attrs = [values.describe(k, arrays) for k, _ in case["self"]["items"]]
        arguments = {"self": f"attributes {', '.join(attrs) or 'none'}", **arguments}
    return RecordedCase(
        file=file,
        test=test,
        target=case["target"],
        binding=case["binding"],
        bytes=line["bytes"],
        digest=line["digest"],
        arguments=arguments,
        returns=values.describe(case["expected"], arrays),
        changed=sorted(case["changed"]),
        state_changed=case["self_after"] is not None,
        random_state=case["random_state"] is not None,
        replay=line["replay"],
    )


def scaffold_tests(task: Task, impl_index: int, *, force: bool = False, cases: int = 3) -> Path:
    """Write a test file with the goal functions' call shapes and ``LMRBENCH-TODO`` values to fill in."""
    impl = task.info.implementation(impl_index)
    checker = default_checker(impl)
    test_path = test_file_path(task, impl)
    testgen.check_replaceable(test_path, force)
    recorded = task.repo_dir / UNIT_TEST_DIR / "data" / f"impl_{impl.index}"
    if recorded.is_dir() and not force:
        raise LmrError(
            f"implementation {impl.index} has a recording ({recorded.relative_to(task.path).as_posix()}); "
            "--force replaces it with a scaffold",
            test_path,
        )
    sigs = []
    for which, (file, qual) in enumerate(goal_targets(impl)):
        golden = task.golden_path(impl, min(which, len(impl.goal_files) - 1))
        try:
            source = golden.read_text(encoding="utf-8")
        except OSError as exc:
            raise LmrError(f"cannot read the golden file: {exc.strerror or exc}", golden) from None
        sigs.append(
            (testgen.read_signature(source, qual, str(golden)), testgen.goal_import(task.repo_dir, file))
        )
    unit_dir = task.repo_dir / UNIT_TEST_DIR
    atomic_write_bytes(
        unit_dir / "lmrbench_checkers.py",
        values.runtime_files(("lmrbench_checkers.py",))["lmrbench_checkers.py"],
    )
    atomic_write_text(test_path, testgen.render_scaffold(impl.index, sigs, checker, cases))
    data_dir = unit_dir / "data" / f"impl_{impl.index}"
    if data_dir.is_dir():
        shutil.rmtree(data_dir)
    impl.unit_test_file = test_path.relative_to(task.repo_dir).as_posix()
    impl.checker = checker
    save_task_info(task.info, task.path)
    return test_path
