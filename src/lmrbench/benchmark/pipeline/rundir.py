"""The layout of a run folder and the typed reads and writes of its files (one file per candidate and stage).

```
RUN/run.json                                   RunManifest
RUN/candidates/<task>/<impl>/candidate.json    Candidate, beside reply.txt and <repo>/<goal file>
RUN/results/<task>/<impl>.json                 EvalResult, beside <impl>.log (the whole output)
RUN/evidence/<task>/<impl>/                    what that result was decided from (see schemas.evidence)
RUN/verdicts/<judge>/<task>/<impl>.json        Verdict
RUN/labels/<annotator>/<task>/<impl>.json      HumanLabel (one folder per annotator)
RUN/labels/<annotator>/queue.json              LabelQueue
RUN/labels/<annotator>/skipped.json            SkipList (items passed over: not labels)
```
Every file is written atomically, so an interrupted stage leaves whole files only and a re-run continues.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from lmrbench import __version__
from lmrbench.core.source.tree import MAX_SOURCE_BYTES
from lmrbench.core.taskset import Task, task_digest
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_text, read_capped
from lmrbench.schemas.run import (
    Candidate,
    CandidateStatus,
    EvalResult,
    HumanLabel,
    LabelQueue,
    RunManifest,
    TaskEntry,
    Verdict,
)

M = TypeVar("M", bound=BaseModel)

MANIFEST = "run.json"
CANDIDATE_JSON = "candidate.json"
REPLY_TXT = "reply.txt"


def load_model(path: Path, model: type[M]) -> M:
    """Read one JSON file into ``model``; LmrError naming the file when it is unreadable or invalid."""
    try:
        return model.model_validate_json(Path(path).read_bytes())
    except FileNotFoundError:
        raise LmrError("no such file", path) from None
    except ValidationError as exc:
        e = exc.errors()[0]
        loc = ".".join(str(x) for x in e["loc"])
        raise LmrError(f"invalid {model.__name__}: {loc}: {e['msg']}", path) from None


def unless_broken(read: Callable[..., M | None], *args: object) -> M | None:
    """``read(*args)``, or None when the file is not a valid one (a stage then redoes and overwrites it)."""
    try:
        return read(*args)
    except LmrError:
        return None


def save_model(path: Path, obj: BaseModel) -> None:
    """Write a model as indented JSON, atomically."""
    atomic_write_text(Path(path), obj.model_dump_json(indent=2) + "\n")


def slug(text: str) -> str:
    """A folder name for a model id (``openai/gpt-4o`` -> ``openai_gpt-4o``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "model"


def digest_files(files: dict[str, bytes], salt: str = "") -> str:
    """sha256 over relative paths and contents (order-independent)."""
    h = hashlib.sha256(salt.encode())
    for rel in sorted(files):
        h.update(rel.encode() + b"\0" + hashlib.sha256(files[rel]).digest())
    return h.hexdigest()


def candidate_repo(folder: Path, goal_files: list[str], repo: str | None = None) -> Path | None:
    """The repository folder of a run's candidate folder, the one place the grader reads its goal files from (None
    for a candidate without goal files); LmrError, in one line naming the folder, when the folder holds anything
    else: a candidate folder is candidate.json, reply.txt and one repository folder (named ``repo`` when given)
    holding the goal files and nothing more, no links."""
    layout = f"a candidate folder holds {CANDIDATE_JSON}, {REPLY_TXT} and {repo or '<repository>'}/<goal files> only"
    try:
        entries = sorted(folder.iterdir()) if folder.is_dir() else []
        dirs = [e for e in entries if e.is_dir() and not e.is_symlink()]
        own = (CANDIDATE_JSON, REPLY_TXT)
        stray = [e.name for e in entries if e not in dirs and (e.is_symlink() or e.name not in own)]
        if repo is not None:  # the repository folder first, whatever sorts before it
            dirs.sort(key=lambda d: d.name != repo)
        stray += [d.name + "/" for d in dirs[1:]] if goal_files else [d.name + "/" for d in dirs]
        if not stray and dirs and repo is not None and dirs[0].name != repo:
            stray = [dirs[0].name + "/"]
        if not stray and dirs:
            wanted = {PurePosixPath(g) for g in goal_files}
            parents = {p for g in wanted for p in g.parents}
            for path in sorted(dirs[0].rglob("*")):
                rel = PurePosixPath(path.relative_to(dirs[0]).as_posix())
                kind_ok = path.is_dir() if rel in parents else path.is_file() if rel in wanted else False
                if path.is_symlink() or not kind_ok:
                    stray.append(f"{dirs[0].name}/{rel}")
                    break
    except OSError as exc:
        raise LmrError(f"cannot be listed: {exc.strerror}", folder) from None
    if stray:
        raise LmrError(f"holds {stray[0]}, which is not part of the candidate ({layout})", folder)
    return dirs[0] if dirs else None


def current_digest(folder: Path, cand: Candidate, graded: tuple[str, list[str]] | None = None) -> Candidate:
    """``cand`` with its digest recomputed from exactly the files the grader reads, as they are now: with
    ``graded`` (the task's repository folder name and the implementation's goal files) those files under that
    folder, whatever candidate.json says; without it, the goal files candidate.json names. A missing or
    unreadable file counts as changed, and a folder holding anything else (``candidate_repo``) gets a digest no
    result names. A candidate without code (not ``ok``) is its status alone (no file of it is graded), and an
    ``ok`` one that names no goal file gets a digest no result names."""
    if cand.status is not CandidateStatus.OK:
        digest = digest_files({}, salt=cand.status.value)
        return cand if digest == cand.digest else cand.model_copy(update={"digest": digest})
    repo_name, goal_files = graded if graded is not None else (None, cand.goal_files)
    blobs: dict[str, bytes] = {} if goal_files else {"\0no goal file": b""}
    try:
        repo = candidate_repo(folder, goal_files, repo_name)
    except LmrError as exc:
        blobs["\0refused"] = str(exc).encode()
        repo = None
    for rel in goal_files if "\0refused" not in blobs else []:
        path = (repo or folder) / rel
        try:
            blobs[rel] = read_capped(path, MAX_SOURCE_BYTES, shown=path) if path.is_file() else b"\0missing"
        except (LmrError, OSError):
            blobs[rel] = b"\0unreadable"
    digest = digest_files(blobs, salt=cand.status.value)
    return cand if digest == cand.digest else cand.model_copy(update={"digest": digest})


def task_entry(task: Task) -> TaskEntry:
    """The manifest entry of a task."""
    return TaskEntry(
        name=task.name,
        instance_id=str(task.info.instance_id),
        digest=task_digest(task),
        implementations=[impl.index for impl in task.info.implementations],
    )


def speaks_of_current(cands: dict[tuple[str, int], Candidate], key: tuple[str, int], digest: str) -> bool:
    """Whether a result, verdict or label made for the candidate ``digest`` counts for ``key``.

    It counts when it names the run's current candidate; where the run holds no candidate for the key (runs
    imported from the official results, which hold outcomes but no code), when it names no candidate either.
    """
    cand = cands.get(key)
    return digest == "" if cand is None else cand.digest == digest


def run_labels(paths: list[Path]) -> list[str]:
    """The name each run goes by in a report: its label, or, for runs that share a label, the label plus the
    shortest end of each one's folder path that tells them apart (``gpt-4o (a/run)``, ``gpt-4o (b/run)``)."""
    paths = [Path(p) for p in paths]
    bases = [RunDir(p).require_manifest().label or p.name for p in paths]
    out = list(bases)
    for base in {b for b in bases if bases.count(b) > 1}:
        group = [k for k, b in enumerate(bases) if b == base]
        parts = {k: paths[k].resolve().parts for k in group}
        for n in range(1, max(len(v) for v in parts.values()) + 1):
            ends = {k: "/".join(parts[k][-n:]) for k in group}
            if len(set(ends.values())) == len(group):
                break
        for k in group:
            out[k] = f"{base} ({ends[k]})"
    return out


@dataclass(frozen=True)
class RunDir:
    """A run folder."""

    path: Path

    def candidate_dir(self, task: str, impl: int) -> Path:
        """Folder of one candidate (task-shaped: holds ``<repo folder>/<goal file>``)."""
        return self.path / "candidates" / task / str(impl)

    def result_path(self, task: str, impl: int) -> Path:
        """Unit-test result of one candidate."""
        return self.path / "results" / task / f"{impl}.json"

    def evidence_dir(self, task: str, impl: int) -> Path:
        """What one candidate's unit-test result was decided from (see ``schemas.evidence``)."""
        return self.path / "evidence" / task / str(impl)

    def started_dir(self, task: str, impl: int) -> Path:
        """The specs of one candidate's commands, written as they start (``Evidence.journal``): what a killed
        evaluation ran. Removed once the result and its evidence are kept."""
        return self.path / "started" / task / str(impl)

    def verdict_path(self, judge: str, task: str, impl: int) -> Path:
        """Verdict of one judge on one candidate."""
        return self.path / "verdicts" / judge / task / f"{impl}.json"

    def label_path(self, annotator: str, task: str, impl: int) -> Path:
        """One annotator's label of one candidate."""
        return self.path / "labels" / slug(annotator) / task / f"{impl}.json"

    def skips_path(self, annotator: str) -> Path:
        """The candidates one annotator skipped."""
        return self.path / "labels" / slug(annotator) / "skipped.json"

    def queue_path(self, annotator: str) -> Path:
        """One annotator's queue."""
        return self.path / "labels" / slug(annotator) / "queue.json"

    def candidate(self, task: str, impl: int, graded: tuple[str, list[str]] | None = None) -> Candidate | None:
        """The candidate, or None when there is none yet; its digest is recomputed from the files now on disk
        (``current_digest``; ``graded``: the task's repository folder and goal files, as the grader reads
        them), so a result, verdict or label of an edited candidate no longer matches it."""
        path = self.candidate_dir(task, impl) / CANDIDATE_JSON
        return current_digest(path.parent, load_model(path, Candidate), graded) if path.is_file() else None

    def candidates(self) -> Iterator[Candidate]:
        """Every candidate of the run, in task and index order (digests recomputed, as ``candidate``)."""
        for path in sorted((self.path / "candidates").glob(f"*/*/{CANDIDATE_JSON}"), key=_order):
            yield current_digest(path.parent, load_model(path, Candidate))

    def result(self, task: str, impl: int) -> EvalResult | None:
        """The unit-test result, or None."""
        path = self.result_path(task, impl)
        return load_model(path, EvalResult) if path.is_file() else None

    def results(self) -> list[EvalResult]:
        """Every unit-test result on disk."""
        return [
            load_model(p, EvalResult) for p in sorted((self.path / "results").glob("*/*.json"), key=_order)
        ]

    def judges(self) -> list[str]:
        """Judge folder names with verdicts."""
        root = self.path / "verdicts"
        return sorted(d.name for d in root.iterdir() if d.is_dir()) if root.is_dir() else []

    def verdict(self, judge: str, task: str, impl: int) -> Verdict | None:
        """A verdict, or None."""
        path = self.verdict_path(judge, task, impl)
        return load_model(path, Verdict) if path.is_file() else None

    def verdicts(self, judge: str) -> list[Verdict]:
        """Every verdict of one judge on disk."""
        root = self.path / "verdicts" / judge
        return [load_model(p, Verdict) for p in sorted(root.glob("*/*.json"), key=_order)]

    def labels(self, annotator: str | None = None) -> list[HumanLabel]:
        """Every human label on disk, or only those of one annotator."""
        root = self.path / "labels"
        pattern = f"{slug(annotator)}/*/*.json" if annotator is not None else "*/*/*.json"
        paths = sorted(root.glob(pattern), key=lambda p: (p.parts[-3], _order(p)))
        return [load_model(p, HumanLabel) for p in paths]

    def queue(self, annotator: str) -> LabelQueue | None:
        """One annotator's queue, or None when none was assigned."""
        path = self.queue_path(annotator)
        return load_model(path, LabelQueue) if path.is_file() else None

    def manifest(self) -> RunManifest | None:
        """run.json, or None for a folder that is not a run yet."""
        path = self.path / MANIFEST
        return load_model(path, RunManifest) if path.is_file() else None

    def require_manifest(self) -> RunManifest:
        """run.json, or LmrError saying this is not a run folder."""
        manifest = self.manifest()
        if manifest is None:
            raise LmrError(
                "not a run folder (no run.json); make one with generate or import-agent", self.path
            )
        return manifest

    def save_manifest(self, manifest: RunManifest) -> None:
        """Write run.json."""
        save_model(self.path / MANIFEST, manifest.model_copy(update={"tool_version": __version__}))


def _order(path: Path) -> tuple[object, ...]:
    """Sort key: task folder in numeric order, then implementation index."""
    parts = path.parts
    task, impl = parts[-3] if path.name == CANDIDATE_JSON else parts[-2], path.parent.name
    if path.name != CANDIDATE_JSON:
        impl = path.stem
    m = re.match(r"(\d+)", task)
    return (int(m.group(1)) if m else 1 << 30, task, int(impl) if impl.isdigit() else 1 << 30, impl)
