"""The outcome of running a task's tests on one repo variant (golden, masked or a candidate)."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field


class TestStatus(StrEnum):
    """How a test run ended. Infrastructure errors are never counted as a wrong answer."""

    __test__ = False

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    TIMEOUT = "timeout"
    INFRA_ERROR = "infra_error"


class TestCaseResult(BaseModel):
    """One test case as the test runner's structured report gives it."""

    __test__ = False
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    test_id: str
    """The test's id, ``<classname>::<name>`` as the junit report spells it."""
    outcome: Literal["passed", "failed", "error", "skipped"]
    """What the test runner reported for this case."""
    duration: float
    """Seconds the case took."""
    message: str = ""
    """The failure or error message (first lines), empty when the case passed."""


class TestReport(BaseModel):
    """A whole test run: the decided status, every case, and the evidence it was decided from."""

    __test__ = False
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    schema_version: int = 1
    """Version of this format."""
    status: TestStatus
    """The decided outcome: passed only when every expected test passed and the report is authentic."""
    cases: list[TestCaseResult] = Field(default_factory=list)
    """Every case of the report, in the order the runner wrote them."""
    expected_ids: list[str] = Field(default_factory=list)
    """The test ids that had to be present and pass (empty: every case in the report)."""
    missing_ids: list[str] = Field(default_factory=list)
    """Expected ids absent from the report."""
    exit_code: int | None = None
    """Exit status of the test process, None when it never ended on its own (timeout, infrastructure)."""
    duration: float = 0.0
    """Wall-clock seconds of the run."""
    log_tail: str = ""
    """The end of the combined output."""
    log_file: str = ""
    """The file holding the whole output, relative to the result file's folder ('' when none was kept)."""
    log: str = Field(default="", exclude=True)
    """The whole output, in memory only: whoever stores the report writes it to ``log_file``."""
    sandbox: Literal["docker", "local"] = Field(validation_alias=AliasChoices("sandbox", "runner"))
    """The sandbox that ran the tests (older files call it ``runner``)."""
    evidence: Literal["pytest", "legacy"] = "pytest"
    """pytest: a sealed junit report; legacy: an official script's log file (weaker evidence)."""
    isolation: Literal["split", "shared"] = "shared"
    """split: the candidate ran in a process of its own that never saw the tests, their data or the report;
    shared: the tests ran in the candidate's process (weaker evidence; reports before split runs say so too)."""
    detail: str = ""
    """One line saying why the status is not passed (or a note on weaker evidence)."""
    read_files: list[str] = Field(default_factory=list)
    """Files of the repository the trusted test process opened (validate's golden runs only; Python modules
    left out): the recorded data the tests read, wherever it lies."""

    @property
    def weaker(self) -> bool:
        """True when the evidence is weaker than a split pytest run in a container (legacy logs, a shared
        process, or the local runner: one user, no container)."""
        return self.evidence == "legacy" or self.isolation == "shared" or self.sandbox == "local"

    @property
    def passed(self) -> bool:
        """True when the status is passed."""
        return self.status is TestStatus.PASSED
