"""What a test run's verdict was decided from, as kept on disk beside its result (``lmrbench regrade`` reads it).

One folder per run unit (a golden, masked, mutant, tolerance or candidate run): ``unit.json`` (``UnitRecord``),
and one ``run-<n>/`` per sandbox command it made: ``spec.json`` (``RunSpec``), the raw reports the command left
(``junit.xml``, ``seal.json``, or ``legacy.json``; ``reads.json``) and its whole output (``output.log``,
``worker.log``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from lmrbench.schemas.testrun import TestReport

EVIDENCE_VERSION = 1


class RunSpec(BaseModel):
    """One sandbox command of a run: what was run, how it ended, and the key its report was sealed with."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    schema_version: int = EVIDENCE_VERSION
    """Version of this format."""
    kind: Literal["pytest", "legacy"]
    """pytest: decided from a sealed junit report; legacy: from the official scripts' sealed logs."""
    argv: list[str]
    """The command run in the repository copy."""
    test_files: list[str]
    """The test files it ran, relative to the repository."""
    env: dict[str, str] = Field(default_factory=dict)
    """The environment the harness gave the command."""
    timeout: float
    """Its wall-clock limit, in seconds."""
    variant: Literal["golden", "masked", "mutant", "candidate"] | None = None
    """What filled the goal functions (None: evidence kept before the variant was named)."""
    trusted: bool = False
    """True when the code under test was the task's own (golden, masked, mutant, tolerance runs): what
    ``variant`` says, when it is named."""
    tree: str = ""
    """The tree the command ran in: the task's repository as a view (split runs), or the folder the variant
    was spliced into (shared runs)."""
    worker_tree: str = ""
    """The candidate's tree of a split run ('' for a shared run)."""
    ended: bool = True
    """False while the command runs: the spec is written before it starts, so a killed run still says what it
    ran; its result is added when it ends."""
    split: bool = False
    """True when the goal functions ran in a process of their own (the candidate's worker)."""
    expected_ids: list[str] | None = None
    """The test ids that had to be present and pass (None: every case of the report)."""
    sandbox: Literal["docker", "local"]
    """The sandbox that ran it."""
    key: str = ""
    """The run's seal key, hex, while the run is in memory; on disk '' (evidence kept before the keys left the
    run folder holds it here: such evidence is not sealed)."""
    nonce: str = ""
    """With ``wrapped_key``: the run's seal key wrapped by the machine's seal key (``harness.seal_key``), which no
    run folder holds: only that key's holder can seal, or check a seal of, this run's reports."""
    wrapped_key: str = ""
    """The run's seal key, hex, wrapped (see ``nonce``)."""
    exit_code: int | None = None
    """The command's exit status; None when it never ended on its own."""
    timed_out: bool = False
    """True when the timeout killed it."""
    duration: float = 0.0
    """Wall-clock seconds."""
    infra_error: str | None = None
    """Why the sandbox itself failed, when it did."""
    conftests: dict[str, str | None] = Field(default_factory=dict)
    """sha256 of each conftest.py the seal says pytest loaded, as the evaluated tree held it (None: not in it)."""
    truncated: list[str] = Field(default_factory=list)
    """Files kept cut to the size cap (their end kept): a verdict that needs them is not derived again."""
    files: dict[str, str] = Field(default_factory=dict)
    """sha256 of each file kept beside this spec, as written."""
    auth: str = ""
    """The machine seal key's tag of this spec (every other field, ``files`` included): an edited spec or file
    is no longer sealed."""

    @model_validator(mode="before")
    @classmethod
    def _trust_of_variant(cls, data: Any) -> Any:
        """The trust of a named variant is the variant's: only a candidate is untrusted."""
        if isinstance(data, dict) and data.get("variant") and "trusted" not in data:
            return {**data, "trusted": data["variant"] != "candidate"}
        return data


class UnitRecord(BaseModel):
    """One run unit: what it was for, how its commands' reports were combined, and the report then stored."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    schema_version: int = EVIDENCE_VERSION
    """Version of this format."""
    purpose: Literal["golden", "masked", "mutant", "tolerance", "candidate"]
    """What the run was for."""
    ordinal: int = 0
    """Which run of its purpose it was (golden run k, mutant k); 0 when there is one of it."""
    key: str = ""
    """The planner's name for the run, as progress lines showed it."""
    isolation: Literal["split", "shared"] | None = None
    """How the variant ran (None: no command ran, e.g. the environment could not be prepared)."""
    shared_why: str = ""
    """Why the tests shared the candidate's process (shared runs)."""
    runs: int = 0
    """How many ``run-<n>/`` folders it holds."""
    environment_error: str = ""
    """Why the task's environment could not be prepared ('' when it was)."""
    env_id: str = ""
    """The environment (image tag or venv) it ran in."""
    report: TestReport
    """The report as decided when it ran (its whole output is in the runs' logs)."""
    auth: str = ""
    """The machine seal key's tag of this record (every other field)."""


class CheckRecord(BaseModel):
    """How one implementation was validated (``check.json`` beside its units), so that its runs can be
    planned and decided again exactly as they were."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    schema_version: int = EVIDENCE_VERSION
    """Version of this format."""
    repeat: int
    """Golden runs."""
    timeout: float
    """Wall-clock limit of one run, in seconds."""
    max_mutants: int
    """Most mutants run."""
    min_kill_rate: float
    """Valid but weak below this kill rate."""
    check_tolerances: bool
    """Whether a float64 re-run of the golden code measured the tolerances."""
