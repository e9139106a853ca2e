"""Validation results: is each implementation of a task valid (golden passes, masked fails, mutants die).

A validation run folder holds ``<task>/impl-<k>.json`` (:class:`ImplValidation`, one per implementation) and
``summary.json`` (:class:`ValidationSummary`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

from lmrbench.schemas.testrun import TestReport, TestStatus


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


ENVIRONMENT_PREFIX = "environment:"
"""Started the reason of an implementation whose environment could not be had, in files written before
``environment_error`` was a field; read from those files only, never written."""


class _EnvironmentFromReasons(_Strict):
    """Files written before ``environment_error`` was a field said it only as a reason ``environment: ...``."""

    reasons: list[str] = []
    environment_error: str = ""

    @model_validator(mode="after")
    def _from_reasons(self) -> _EnvironmentFromReasons:
        if not self.environment_error:
            found = next((r for r in self.reasons if r.startswith(ENVIRONMENT_PREFIX)), "")
            self.environment_error = found.removeprefix(ENVIRONMENT_PREFIX).strip()
        return self


NotRunCause = Literal["lfs", "empty_repo", "no_tests", "image", "requirement", "codec", "environment", "import",
                      "data", "gpu", "download"]
"""What stopped an implementation before its golden code ran: Git LFS pointers the tests or the golden code read,
an empty or missing repository folder (a submodule never checked out), no unit tests, a FROM image that cannot be
had, a requirement that cannot be resolved, a value the codec cannot carry, another environment error; or, read
from a failed golden run's output: a module that cannot be imported, a data file that is missing, a GPU or a
download the tests need."""

NOT_RUN_LABELS: dict[str, str] = {
    "lfs": "LFS pointers the tests read",
    "empty_repo": "empty submodules",
    "no_tests": "no unit tests",
    "image": "FROM images that cannot be had",
    "requirement": "requirements that cannot be resolved",
    "codec": "values the codec cannot carry",
    "environment": "other environment errors",
    "import": "imports that fail",
    "data": "data files missing",
    "gpu": "GPUs the tests need",
    "download": "downloads the tests need",
}
"""How the summary line counts each cause (``23 LFS pointers the tests read``)."""


class NotRun(_Strict):
    """Why an implementation's golden code never ran, and what fixes it."""

    cause: NotRunCause
    """What stopped it."""
    detail: str
    """The cause, named (the pointer files, the submodule, the image, the requirement, the value)."""
    fix: str = ""
    """What to do about it, one line."""


Verdict = Literal["yes", "weak", "no", "not run"]
"""The valid column: every check held; valid but weak; invalid; could not be run (no golden code ran)."""


class MutantResult(_Strict):
    """One mutant of a golden function body and what the tests made of it."""

    qualname: str
    """The mutated function."""
    kind: str
    """The kind of mutation (constant return, flipped sign, ...)."""
    description: str
    """What was changed, in a few words."""
    status: TestStatus
    """The test run's status on the mutated code."""
    killed: bool
    """True when the tests failed, errored or timed out on the mutant (an infrastructure error does not)."""
    detail: str = ""
    """The failing tests or the error, shortened."""
    name: str = ""
    """The mutant's name in the run (``M3 flip_sign``)."""
    diff: str = ""
    """The change as a short unified diff of the goal file."""
    pinned: str = ""
    """For a ``pin_parameter`` mutant: the parameter it pins (empty in results written before this field)."""
    equivalent: bool = False
    """The mutant survived, and no recorded call (nor any case the recording added) told it from the golden
    code: equivalent on every recorded input, not counted against the tests."""


class ImplValidation(_EnvironmentFromReasons):
    """``<task>/impl-<k>.json``: the validation of one implementation of one task."""

    schema_version: Literal[1] = 1
    """Version of this format."""
    task: str
    """The task folder's name."""
    impl: int
    """The implementation's index."""
    sandbox: str = Field(validation_alias=AliasChoices("sandbox", "runner"))
    """The sandbox the tests ran in (docker or local; older files call it ``runner``)."""
    evidence: Literal["pytest", "legacy"] | None = None
    """How the tests decided: pytest's report, or the official scripts' logs (weaker)."""
    isolation: Literal["split", "shared"] | None = None
    """split: the code under test ran in a process of its own, apart from the tests and their data; shared:
    in the tests' process (weaker evidence)."""
    fingerprint: str
    """A hash of the task files the result depends on; a changed task is validated again."""
    repeat: int
    """How many golden runs were asked for."""
    test_files: list[str] = []
    """The unit test files run, relative to the repository folder."""
    golden_runs: list[TestReport] = []
    """The report of each golden run."""
    golden_passes: int = 0
    """Golden runs that passed every test."""
    masked: TestReport | None = None
    """The report of the masked run (None when it was not reached)."""
    mutants: list[MutantResult] = []
    """Every mutant run."""
    mutants_killed: int = 0
    """Mutants the tests failed."""
    mutants_total: int = 0
    """Mutants that ran to a verdict (infrastructure errors and equivalent mutants excluded)."""
    weak_reasons: list[str] = []
    """Why the tests are weak besides the kill rate: a parameter no test varies, a surviving mutant that
    pins a parameter (``no test varies beta``)."""
    flaky_tests: list[str] = []
    """Tests whose outcome differed between golden runs."""
    tolerance_margin: float | None = None
    """The largest share of a tolerance that a float64 re-run of the golden code used (1.0: at the limit; None
    when not measured: exact or hand-written tests, or a failing golden run)."""
    tolerance_note: str = ""
    """What the float64 re-run found, one line (empty when it did not run)."""
    seconds: float = 0.0
    """Wall-clock time spent validating this implementation."""
    valid: bool
    """True when every check held."""
    weak: bool = False
    """Valid, but the tests killed fewer mutants than ``min_kill_rate`` (valid but weak)."""
    min_kill_rate: float = 0.0
    """The kill rate below which a valid implementation is weak, as asked for."""
    reasons: list[str] = []
    """Why the implementation is invalid, one line each (empty when valid)."""
    environment_error: str = ""
    """Why the task's environment could not be had (its image did not build, its FROM cannot be pulled): no test
    ran, so it is neither a golden failure nor counted in the golden pass rate; empty when it was built."""
    not_run: NotRun | None = None
    """Why the golden code never ran (LFS pointers, an empty submodule, an environment, a value the codec cannot
    carry), with the fix; None when it ran. Such an implementation is neither valid nor invalid: not run."""
    finished_at: datetime
    """When the validation ended (UTC)."""

    @property
    def golden_passed(self) -> bool:
        """Every golden run passed."""
        return self.repeat > 0 and self.golden_passes == self.repeat == len(self.golden_runs)

    @property
    def verdict(self) -> Verdict:
        """yes, weak, no, or not run."""
        return verdict_of(self.valid, self.weak, self.not_run)

    @property
    def evidence_text(self) -> str:
        """How the golden runs were decided: split, shared (weaker) or legacy (weaker); empty when none ran."""
        if not self.golden_runs:
            return ""
        if self.evidence == "legacy":
            return "legacy (weaker)"
        return "split" if self.isolation == "split" else "shared (weaker)"

    @property
    def masked_failed(self) -> bool:
        """The masked run failed (a pass or an infrastructure error is not a failure)."""
        return self.masked is not None and self.masked.status in (
            TestStatus.FAILED,
            TestStatus.ERROR,
            TestStatus.TIMEOUT,
        )

    @property
    def kill_rate(self) -> float | None:
        """Mutants killed over mutants run, or None when none ran."""
        return self.mutants_killed / self.mutants_total if self.mutants_total else None

    @property
    def kind_kills(self) -> dict[str, tuple[int, int]]:
        """Per mutant kind: (killed, run to a verdict), equivalent mutants and infrastructure errors excluded."""
        out: dict[str, tuple[int, int]] = {}
        for m in self.mutants:
            if m.equivalent or m.status is TestStatus.INFRA_ERROR:
                continue
            killed, total = out.get(m.kind, (0, 0))
            out[m.kind] = (killed + m.killed, total + 1)
        return out


class SummaryRow(_EnvironmentFromReasons):
    """One implementation's line in the summary."""

    task: str
    """The task folder's name."""
    impl: int
    """The implementation's index."""
    valid: bool
    """Whether it is valid."""
    golden_passes: int
    """Golden runs that passed."""
    repeat: int
    """Golden runs asked for."""
    masked_failed: bool
    """The masked run failed."""
    mutants_killed: int
    """Mutants the tests failed."""
    mutants_total: int
    """Mutants run to a verdict."""
    flaky: int
    """Flaky tests."""
    seconds: float
    """Time spent."""
    skipped: bool
    """True when an earlier result was reused."""
    evidence: str = ""
    """How the golden runs were decided: split, shared (weaker) or legacy (weaker); empty when none ran."""
    reasons: list[str] = []
    """Why it is invalid."""
    environment_error: str = ""
    """Why its environment could not be had (no test ran); empty when it was built."""
    not_run: NotRun | None = None
    """Why its golden code never ran, with the fix (None when it ran)."""
    verdict: Verdict | None = None
    """yes, weak, no or not run (None in files written before it was a field)."""
    weak: bool = False
    """Valid, but its tests kill fewer mutants than asked for."""
    kill_rate: float | None = None
    """Mutants killed over mutants run (None when none ran)."""
    tolerance_margin: float | None = None
    """The largest share of a tolerance a float64 re-run of the golden code used (None: not measured)."""
    tolerance_note: str = ""
    """What the float64 re-run found, one line."""
    survivors: list[str] = []
    """Each surviving mutant: its name and what it changed."""
    weak_reasons: list[str] = []
    """Why the tests are weak besides the kill rate (``no test varies beta``)."""
    kinds: dict[str, list[int]] = {}
    """Per mutant kind: [killed, run to a verdict]."""
    equivalent: list[str] = []
    """Surviving mutants that are equivalent on every recorded input (not counted)."""


class ValidationSummary(_Strict):
    """``summary.json``: the last ``lmrbench validate`` over a task set."""

    schema_version: Literal[1] = 1
    """Version of this format."""
    bench: str
    """The task set's folder."""
    sandbox: str = Field(validation_alias=AliasChoices("sandbox", "runner"))
    """The sandbox used (older files call it ``runner``)."""
    rows: list[SummaryRow]
    """One row per implementation, in task order."""
    problems: list[str] = []
    """Tasks that could not be loaded or validated, one line each."""
    golden_pass_rate: float | None = None
    """Implementations whose golden code passed every run, over the implementations whose golden code ran (None
    when none ran)."""
    golden_ran: int | None = None
    """Implementations whose golden code ran (the rate's denominator; None in older files)."""
    seconds: float = 0.0
    """Wall-clock time of the whole run."""
    finished_at: datetime
    """When the run ended (UTC)."""


def verdict_of(valid: bool, weak: bool, not_run: NotRun | None) -> Verdict:
    """The valid column's word: ``not run`` when the golden code never ran, else ``no``, ``weak`` or ``yes``."""
    if not_run is not None:
        return "not run"
    return "no" if not valid else "weak" if weak else "yes"
