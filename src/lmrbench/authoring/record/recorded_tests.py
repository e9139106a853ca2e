"""Turn chosen calls into an implementation's stored cases and test file, or write a scaffold to fill in by hand.

Nothing in the task changes until every case is saved and checked: the data folder
(``unit_test/data/impl_<k>``) is staged and renamed, the test file and info.json are written atomically.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lmrbench.authoring.record import testgen
from lmrbench.authoring.record.amplify_plans import made_text
from lmrbench.authoring.record.case_files import read_case
from lmrbench.authoring.record.generated_file import check_replaceable
from lmrbench.authoring.record.recorded_call import RecordedCall
from lmrbench.core.source.tree import goal_plan
from lmrbench.core.taskset import Task
from lmrbench.defaults import UNIT_TEST_DIR, recording_folder, unit_test_file
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_bytes, atomic_write_json, atomic_write_text, staging_dir
from lmrbench.progress import Progress
from lmrbench.runtime import TEST_RUNTIME, runtime_files
from lmrbench.runtime.lmrbench_values import describe, untouched_names
from lmrbench.schemas.recording import (
    AmplifiedParameter,
    BodyCoverage,
    MutantCatch,
    RecordedCase,
    RecordingIndex,
    SearchSummary,
)
from lmrbench.schemas.task_info import CheckerSettings, Implementation, save_task_info


@dataclass(frozen=True)
class RecordResult:
    """What ``record_tests`` wrote."""

    test_file: Path
    data_dir: Path
    cases: list[RecordedCase]
    coverage: list[BodyCoverage] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Calls left out because a value could not be saved, one line each (the first few)."""
    summary: list[str] = field(default_factory=list)
    """What the recording says about its cases: kept and dropped calls, added cases, parameters no test
    varies, what the kept cases kill per mutant kind (also logged, and kept in index.json)."""

    @property
    def total_bytes(self) -> int:
        """Bytes of all case files."""
        return sum(c.bytes for c in self.cases)


@dataclass(frozen=True)
class CaseFacts:
    """What index.json says of the chosen cases beyond the cases themselves (those fields of ``RecordingIndex``)."""

    selection: list[str] = field(default_factory=list)
    """The summary: kept and dropped calls, added cases, kill rates per kind."""
    amplified: list[AmplifiedParameter] = field(default_factory=list)
    unvaried: list[str] = field(default_factory=list)
    pins: dict[str, dict[str, str]] = field(default_factory=dict)
    grad: list[str] = field(default_factory=list)
    mutants: list[MutantCatch] = field(default_factory=list)
    search: list[SearchSummary] = field(default_factory=list)


@dataclass(frozen=True)
class Recording:
    """How the calls were recorded, kept in the data folder's index.json and the test file's header."""

    command: str
    sandbox: str
    max_calls: int
    factory: str | None
    notes: list[str] = field(default_factory=list)
    """Lines for the test file's header (cases added by varying a parameter)."""
    facts: CaseFacts = field(default_factory=CaseFacts)
    """More fields of index.json: selection, amplified, unvaried, pins, grad, mutants."""


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


def goal_targets(task: Task, impl: Implementation) -> list[tuple[str, str]]:
    """(goal file, qualname) of each goal function, paired as ``tree.goal_plan`` pairs them."""
    return [(file, qual) for file, quals in goal_plan(task, impl) for qual in quals]


def test_file_path(task: Task, impl: Implementation) -> Path:
    """Where the implementation's generated test goes: ``<repo>/unit_test/unit_test_<k>.py``."""
    return task.repo_dir / unit_test_file(impl.index)


def write_recording(
    task: Task,
    impl: Implementation,
    chosen: dict[str, list[RecordedCall]],
    targets: list[tuple[str, str]],
    imports: dict[str, testgen.GoalImport],
    recording: Recording,
    progress: Progress,
    coverage: list[BodyCoverage] | None = None,
) -> RecordResult:
    """Store the chosen calls of each target as cases, write the test file and point info.json at it.

    ``imports`` says how the test imports each goal file (``testgen.goal_import``, checked before the run).
    """
    unit_dir = task.repo_dir / UNIT_TEST_DIR
    data_dir = task.repo_dir / recording_folder(impl.index)
    test_path = test_file_path(task, impl)
    single = len(targets) == 1
    cases: list[RecordedCase] = []
    specs: list[testgen.CaseSpec] = []
    expected: list[Any] = []
    with staging_dir(data_dir, replace=True) as stage:
        for file, qual in targets:
            prefix = "" if single else f"{testgen.snake_name(qual.replace('.', '_'))}_"
            for n, call in enumerate(chosen[f"{file}::{qual}"], 1):
                raw = call.path.read_bytes()
                case, arrays = read_case(call.path)
                name = f"{prefix}case_{n}"
                (stage / f"{name}.npz").write_bytes(raw)
                entry = _case_entry(case, arrays, f"{name}.npz", f"test_{name}", call)
                cases.append(entry)
                if not case.get("raises"):  # a call that raises says nothing of the results' type
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
                        held=bool(case.get("held")),
                        untouched=bool(untouched_names(case)),
                        own_copies=case.get("shares") is not None,
                        raises=str(case.get("raises") or ""),
                    )
                )
        checker, why = checker_by_type(impl, expected)
        index = RecordingIndex(
            implementation=impl.index,
            command=recording.command,
            sandbox=recording.sandbox,
            recorded_at=datetime.now(UTC),
            max_calls=recording.max_calls,
            checker=checker,
            self_factory=recording.factory,
            cases=cases,
            coverage=coverage or [],
            selection=recording.facts.selection,
            amplified=recording.facts.amplified,
            unvaried=recording.facts.unvaried,
            pins=recording.facts.pins,
            grad=recording.facts.grad,
            mutants=recording.facts.mutants,
            search=recording.facts.search,
        )
        atomic_write_json(stage / "index.json", index.model_dump(mode="json"))
        for name, data in runtime_files(TEST_RUNTIME).items():
            atomic_write_bytes(unit_dir / name, data)
        atomic_write_text(
            test_path,
            testgen.render_recorded_test(
                impl.index, specs, checker, recording.command, recording.factory, checker_note=why,
                notes=recording.notes,
            ),
        )
    impl.unit_test_file = test_path.relative_to(task.repo_dir).as_posix()
    impl.checker = checker
    save_task_info(task.info, task.path)
    for c in cases:
        progress.log(f"{c.file}: {c.bytes:,} bytes ({c.target}: {', '.join(c.arguments) or 'no arguments'})")
    return RecordResult(test_file=test_path, data_dir=data_dir, cases=cases, coverage=coverage or [])


def _needs_positional(case: dict[str, Any]) -> bool:
    spread = any(a["kind"] == "var_positional" and a["value"]["items"] for a in case["arguments"])
    return spread or any(a["kind"] == "positional_only" for a in case["arguments"])


def _case_entry(
    case: dict[str, Any], arrays: dict[str, Any], file: str, test: str, call: RecordedCall
) -> RecordedCase:
    arguments = {a["name"]: describe(a["value"], arrays) for a in case["arguments"]}
    if case["binding"] == "method" and case["self"] is not None:
        attrs = [describe(k, arrays) for k, _ in case["self"]["items"]]
        arguments = {"self": f"attributes {', '.join(attrs) or 'none'}", **arguments}
    return RecordedCase(
        file=file,
        test=test,
        target=case["target"],
        binding=case["binding"],
        bytes=call.size,
        digest=call.digest,
        arguments=arguments,
        returns=describe(case["expected"], arrays),
        changed=sorted(case["changed"]),
        state_changed=case["self_after"] is not None,
        random_state=case["random_state"] is not None,
        replay=call.replay,
        amplified=made_text(call.amplified) if call.amplified else "",
    )


def scaffold_tests(task: Task, impl_index: int, *, force: bool = False, cases: int = 3) -> Path:
    """Write a test file with the goal functions' call shapes and ``LMRBENCH-TODO`` values to fill in."""
    impl = task.info.implementation(impl_index)
    checker = default_checker(impl)
    test_path = test_file_path(task, impl)
    check_replaceable(test_path, force)
    data_dir = task.repo_dir / recording_folder(impl.index)
    if data_dir.is_dir() and not force:
        raise LmrError(
            f"implementation {impl.index} has a recording ({data_dir.relative_to(task.path).as_posix()}); "
            "--force replaces it with a scaffold",
            test_path,
        )
    sigs: list[tuple[testgen.Signature, testgen.GoalImport]] = []
    for which, (file, quals) in enumerate(goal_plan(task, impl)):
        golden = task.golden_path(impl, which)
        try:
            source = golden.read_text(encoding="utf-8")
        except OSError as exc:
            raise LmrError(f"cannot read the golden file: {exc.strerror or exc}", golden) from None
        sigs.extend(
            (testgen.read_signature(source, qual, str(golden)), testgen.goal_import(task.repo_dir, file))
            for qual in quals
        )
    atomic_write_bytes(
        task.repo_dir / UNIT_TEST_DIR / "lmrbench_checkers.py",
        runtime_files(("lmrbench_checkers.py",))["lmrbench_checkers.py"],
    )
    atomic_write_text(test_path, testgen.render_scaffold(impl.index, sigs, checker, cases))
    if data_dir.is_dir():
        shutil.rmtree(data_dir)
    impl.unit_test_file = test_path.relative_to(task.repo_dir).as_posix()
    impl.checker = checker
    save_task_info(task.info, task.path)
    return test_path


def _recording_index(task: Task, impl_index: int) -> RecordingIndex | None:
    """An implementation's recording index (index.json), or None when none was recorded or it does not load."""
    index = task.repo_dir / recording_folder(impl_index) / "index.json"
    try:
        return RecordingIndex.model_validate_json(index.read_bytes())
    except (OSError, ValueError):
        return None


def recorded_command(task: Task) -> str:
    """The command the task's tests were last recorded with (its first implementation that has a readable
    recording), or "" when none was recorded."""
    for impl in task.info.implementations:
        if (index := _recording_index(task, impl.index)) is not None:
            return index.command
    return ""


def recorded_cases(task: Task, impl_index: int) -> list[RecordedCase]:
    """The cases last recorded for an implementation, as its index.json lists them ([] when none was recorded or
    the index does not load)."""
    index = _recording_index(task, impl_index)
    return [] if index is None else index.cases
