"""Keeping what a verdict was decided from, and reading it back (see ``schemas.evidence`` for the layout).

The harness records each sandbox command of a run as a ``RunEvidence`` (its spec, the raw reports it left, its
whole output) into an ``Evidence`` the caller hands down; whoever stores the run's result writes it beside the
result with ``write_unit``, in one atomic step, each file capped in size, each spec and record tagged with the
machine's seal key (``seal_key``) over the digests of the files beside it. ``read_unit`` gives it back, and
``unsealed`` names what was changed, added or removed since.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from lmrbench.core.sandbox import RunResult
from lmrbench.core.treeview import describe
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_bytes, read_capped, staging_dir
from lmrbench.harness.request import RunRequest
from lmrbench.harness.seal_key import authenticate, unwrap, wrap
from lmrbench.schemas.evidence import RunSpec, UnitRecord
from lmrbench.schemas.testrun import TestReport

M = TypeVar("M", UnitRecord, RunSpec)
UNIT_FILE = "unit.json"
SPEC_FILE = "spec.json"
OUTPUT_LOG = "output.log"
WORKER_LOG = "worker.log"
REPORT_FILES = ("junit.xml", "seal.json", "legacy.json", "reads.json")
"""The raw files a command may leave in its out folder that a verdict is decided from."""
MAX_FILE = 16 << 20
"""Largest file kept; a longer one keeps its end and is named in the spec's ``truncated``."""
MAX_RECORD = 32 << 20
"""Largest ``unit.json`` or ``spec.json`` read back (their reports' case messages are capped when made)."""


@dataclass(frozen=True)
class RunEvidence:
    """One sandbox command of a run, as the harness saw it."""

    spec: RunSpec
    files: dict[str, bytes] = field(default_factory=dict)
    """The raw reports it left, by name (``REPORT_FILES``)."""
    output: str = ""
    worker_output: str = ""

    def run_result(self) -> RunResult:
        """How the command ended, as the sandbox said."""
        s = self.spec
        return RunResult(exit_code=s.exit_code, timed_out=s.timed_out, output=self.output, duration=s.duration,
                         infra_error=s.infra_error, worker_output=self.worker_output)

    @property
    def key(self) -> bytes:
        """The seal key (unwrapped with this machine's seal key, which must be the one it was kept with: LmrError
        when there is none here)."""
        if self.spec.wrapped_key:
            return unwrap(self.spec.nonce, self.spec.wrapped_key)
        return bytes.fromhex(self.spec.key)


@dataclass
class Evidence:
    """What one run unit's commands leave, filled in by the harness as they end."""

    runs: list[RunEvidence] = field(default_factory=list)
    isolation: str | None = None
    shared_why: str = ""
    journal: Path | None = None
    """Where each command's spec is written (``run-<n>/spec.json``, without its key) before it starts and again
    when it ends: what a killed or cancelled run ran. The caller removes it once the unit's evidence is kept."""


def spec_of(request: RunRequest, sandbox: str) -> RunSpec:
    """The spec of a test command, as decided before it starts."""
    command = request.command
    variant = command.variant.kind if command.variant is not None else None
    return RunSpec(kind=request.kind, argv=list(command.argv), test_files=list(request.test_files),
                   env=dict(command.env), timeout=command.timeout, variant=variant, split=command.worker is not None,
                   expected_ids=request.expected_ids, sandbox=sandbox,  # type: ignore[arg-type]
                   tree=describe(command.tree), worker_tree=describe(command.worker.tree) if command.worker else "",
                   key=request.key.hex(), ended=False)


def start_run(evidence: Evidence | None, request: RunRequest, sandbox: str) -> RunSpec:
    """The spec of a command about to start, written into the evidence's journal first (when it has one)."""
    spec = spec_of(request, sandbox)
    if evidence is not None:
        _journal(evidence, len(evidence.runs) + 1, spec)
    return spec


def record_run(evidence: Evidence | None, spec: RunSpec, res: RunResult, files: dict[str, bytes | None]) -> None:
    """Add one finished command to ``evidence`` (nothing when None), with its result and the files it left."""
    if evidence is None:
        return
    spec = spec.model_copy(update={"exit_code": res.exit_code, "timed_out": res.timed_out,
                                   "duration": res.duration, "infra_error": res.infra_error, "ended": True})
    kept = {name: data for name, data in files.items() if data is not None}
    evidence.runs.append(RunEvidence(spec, kept, res.output, res.worker_output))
    _journal(evidence, len(evidence.runs), spec)


def _journal(evidence: Evidence, n: int, spec: RunSpec) -> None:
    """Write ``spec`` (without its key) as the journal's ``run-<n>/spec.json``."""
    if evidence.journal is None:
        return
    path = evidence.journal / f"run-{n}" / SPEC_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, spec.model_copy(update={"key": ""}).model_dump_json(indent=2).encode() + b"\n")
    except OSError as exc:
        raise LmrError(f"cannot write the run's spec: {exc.strerror or exc}", path) from None


def end_journal(journal: Path | None) -> None:
    """Remove a unit's journal once its evidence is kept (or it ran no command)."""
    if journal is not None:
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(journal)


def unit_record(purpose: str, ordinal: int, key: str, report: TestReport, evidence: Evidence | None, *,
                environment_error: str = "", env_id: str = "") -> tuple[UnitRecord, list[RunEvidence]]:
    """The record of one run unit and its commands, ready for ``write_unit``."""
    runs = list(evidence.runs) if evidence is not None else []
    isolation = evidence.isolation if evidence is not None and runs else None
    record = UnitRecord(purpose=purpose, ordinal=ordinal, key=key, isolation=isolation,  # type: ignore[arg-type]
                        shared_why=evidence.shared_why if evidence is not None else "",
                        environment_error=environment_error, env_id=env_id, report=report)
    return record, runs


def _capped(data: bytes) -> tuple[bytes, bool]:
    return (data[-MAX_FILE:], True) if len(data) > MAX_FILE else (data, False)


_ADDED = {"variant": None, "tree": "", "worker_tree": "", "ended": True}
"""Fields a spec gained after evidence was first kept: left out of its tag at these values, so that evidence
kept before them stays sealed."""


def _tag_spec(spec: RunSpec, create: bool = True) -> str:
    unset = {name for name, value in _ADDED.items() if getattr(spec, name) == value}
    return authenticate(spec.model_dump_json(exclude={"auth", *unset}).encode(), create=create)


def _tag_record(record: UnitRecord, create: bool = True) -> str:
    return authenticate(record.model_dump_json(exclude={"auth"}).encode(), create=create)


def write_unit(folder: Path, record: UnitRecord, runs: list[RunEvidence]) -> None:
    """Write one unit's evidence as ``folder`` (replacing an older one only once the new one is whole)."""
    with staging_dir(Path(folder), replace=True) as tmp:
        for n, run in enumerate(runs, start=1):
            sub = tmp / f"run-{n}"
            sub.mkdir()
            truncated, digests = [], {}
            blobs = {**run.files, OUTPUT_LOG: run.output.encode("utf-8", "replace")}
            if run.worker_output:
                blobs[WORKER_LOG] = run.worker_output.encode("utf-8", "replace")
            for name, data in blobs.items():
                kept, cut = _capped(data)
                truncated += [name] if cut else []
                digests[name] = hashlib.sha256(kept).hexdigest()
                atomic_write_bytes(sub / name, kept)
            key = run.spec.key
            nonce, wrapped = wrap(bytes.fromhex(key)) if key else (run.spec.nonce, run.spec.wrapped_key)
            spec = run.spec.model_copy(update={"truncated": truncated, "files": digests, "key": "", "nonce": nonce,
                                               "wrapped_key": wrapped})
            spec = spec.model_copy(update={"auth": _tag_spec(spec)})
            atomic_write_bytes(sub / SPEC_FILE, spec.model_dump_json(indent=2).encode() + b"\n")
        record = record.model_copy(update={"runs": len(runs)})
        record = record.model_copy(update={"auth": _tag_record(record)})
        atomic_write_bytes(tmp / UNIT_FILE, record.model_dump_json(indent=2).encode() + b"\n")


def unsealed(folder: Path) -> list[str]:
    """What of one unit's evidence is no longer as it was sealed (relative paths: a file changed, added or
    removed, a spec or record edited, evidence kept before it was sealed); [] when all of it is. LmrError when
    this machine holds no seal key (``seal_key``)."""
    folder = Path(folder)
    record = _load(folder / UNIT_FILE, UnitRecord)
    bad = [] if record.auth and record.auth == _tag_record(record, create=False) else [UNIT_FILE]
    runs = {f"run-{n}" for n in range(1, record.runs + 1)}
    bad += sorted(p.name for p in folder.iterdir() if p.name not in runs and p.name != UNIT_FILE)
    for name in sorted(runs):
        sub = folder / name
        try:
            spec = _load(sub / SPEC_FILE, RunSpec)
        except LmrError:
            bad.append(f"{name}/{SPEC_FILE}")
            continue
        if not spec.auth or spec.auth != _tag_spec(spec, create=False):
            bad.append(f"{name}/{SPEC_FILE}")
            continue
        present = {p.name for p in sub.iterdir() if p.name != SPEC_FILE}
        for file in sorted(present | set(spec.files)):
            try:
                ok = file in spec.files and hashlib.sha256(read_capped(sub / file, MAX_FILE)).hexdigest() == \
                    spec.files[file]
            except LmrError:  # gone, a link, grown past the cap
                ok = False
            bad += [] if ok else [f"{name}/{file}"]
    return bad


def remove_units(folder: Path) -> None:
    """Remove an older result's evidence (a result validated again keeps only its own)."""
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(folder)


def _read_text(path: Path) -> str:
    try:
        return read_capped(path, MAX_FILE).decode("utf-8", errors="replace")
    except LmrError:
        return ""


def read_unit(folder: Path) -> tuple[UnitRecord, list[RunEvidence]]:
    """One unit's evidence; LmrError naming the file when it is missing or not what was written."""
    folder = Path(folder)
    record = _load(folder / UNIT_FILE, UnitRecord)
    runs = []
    for n in range(1, record.runs + 1):
        sub = folder / f"run-{n}"
        spec = _load(sub / SPEC_FILE, RunSpec)
        files = {}
        for name in REPORT_FILES:
            if (sub / name).is_file():
                files[name] = read_capped(sub / name, MAX_FILE)
        runs.append(RunEvidence(spec, files, _read_text(sub / OUTPUT_LOG), _read_text(sub / WORKER_LOG)))
    return record, runs


def _load(path: Path, model: type[M]) -> M:
    try:
        return model.model_validate_json(read_capped(path, MAX_RECORD))
    except LmrError as exc:
        raise LmrError(f"no evidence kept: {exc.problem}", path) from None
    except (ValidationError, ValueError) as exc:
        first = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise LmrError(f"not an evidence file: {first}", path) from None
