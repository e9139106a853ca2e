"""``task suggest``: from a paper and its repository to ranked task candidates.

Rank the repository's functions against the paper (``suggest_rank``), then, for the best ``top``: whether the
recorder can wrap them, which commands call them and how often, whether the codec carries their arguments
(``suggest_callers``), whether a copy of their body sits elsewhere in the repository (``nearcopy``: a leak once
masked), and whether a task of a given set already masks them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from lmrbench.authoring.check import nearcopy
from lmrbench.authoring.suggest.paper_passages import pdf_passages
from lmrbench.authoring.suggest.suggest_callers import (
    CallerReport,
    Calls,
    CommandRun,
    default_commands,
    find_callers,
    recordable,
)
from lmrbench.authoring.suggest.suggest_rank import Ranked, rank_functions, rankable
from lmrbench.authoring.task.clone import source_url
from lmrbench.authoring.task.task_spec import masked_functions
from lmrbench.core.source.index import FunctionInfo, index_repo_report
from lmrbench.defaults import SUGGEST_BUDGET as DEFAULT_BUDGET
from lmrbench.defaults import SUGGEST_TOP as DEFAULT_TOP
from lmrbench.errors import LmrError, UsageError
from lmrbench.harness.sandbox import Sandbox
from lmrbench.progress import NullProgress, Progress, check_cancel


@dataclass
class Candidate:
    """One ranked function and what was found out about it."""

    rank: int
    ranked: Ranked
    not_recordable: str | None = None
    """Why the recorder cannot wrap it (a generator, ...), else None."""
    calls: Calls = field(default_factory=Calls)
    caller: str | None = None
    """The command that calls it (one that exits cleanly, when any does)."""
    copies: list[str] = field(default_factory=list)
    """``path:first-last (score)`` of each near-copy of its body elsewhere in the repository."""
    task: str | None = None
    """The task of the given set that already masks it."""

    @property
    def function(self) -> FunctionInfo:
        """The function."""
        return self.ranked.function


@dataclass
class Suggestion:
    """The candidates, best first, and how they were found."""

    candidates: list[Candidate]
    runs: list[CommandRun]
    functions: int
    """Functions ranked."""
    passages: int
    """Passages of the paper."""
    commands: list[str]
    """The commands run (given, or found in the repository)."""
    no_calls: str = ""
    """Why no calls were counted though commands were to run (the repository's requirements cannot install)."""


def copies_elsewhere(root: Path, functions: list[FunctionInfo]) -> dict[str, list[str]]:
    """ref -> places repeating the function's source (score >= ``nearcopy.NEAR_COPY_THRESHOLD``), the function's
    own lines left out."""
    texts: dict[str, list[str]] = {}
    bodies: dict[str, str] = {}
    for f in functions:
        if f.file not in texts:
            texts[f.file] = (nearcopy.read_text(Path(root) / f.file) or "").splitlines()
        bodies[f.ref] = "\n".join(texts[f.file][f.lineno - 1 : f.end_lineno])
    found: dict[str, list[str]] = {f.ref: [] for f in functions}
    by_ref = {f.ref: f for f in functions}
    for near in nearcopy.scan(Path(root), bodies):
        if near.path != by_ref[near.qualname].file:
            found[near.qualname].append(f"{near.location} ({near.score:.2f})")
    for f in functions:  # its own file, with its own lines blanked
        prints, length = nearcopy.body_fingerprints(bodies[f.ref])
        if len(prints) < nearcopy.MIN_FINGERPRINTS:
            continue
        lines = list(texts[f.file])
        lines[f.lineno - 1 : f.end_lineno] = [""] * (f.end_lineno - f.lineno + 1)
        score, first, last = nearcopy.best_span("\n".join(lines), prints, length)
        if score >= nearcopy.NEAR_COPY_THRESHOLD:
            found[f.ref].append(f"{f.file}:{first}-{last} ({score:.2f})")
    return found


def suggest(
    repo: Path,
    paper: Path,
    *,
    commands: list[str] | None = None,
    sandbox: Sandbox | None = None,
    top: int = DEFAULT_TOP,
    budget: float = DEFAULT_BUDGET,
    bench: Path | None = None,
    repo_url: str | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> Suggestion:
    """Rank ``repo``'s functions against ``paper`` and examine the best ``top``. Without a ``sandbox`` nothing
    runs (no calls are counted); ``commands`` None runs the repository's tests and example scripts."""
    progress = progress or NullProgress()
    repo = Path(repo)
    if not repo.is_dir():
        raise LmrError("not a folder", repo)
    if top < 1:
        raise UsageError("--top must be at least 1")
    progress.start("reading the paper", None)
    passages = pdf_passages(Path(paper))
    index = index_repo_report(repo, progress=progress, cancel=cancel)
    for problem in index.problems:
        progress.log(f"note: not indexed: {problem}")
    ranked = rank_functions(repo, index.functions, passages, limit=top)
    if not ranked:
        raise LmrError("no function of the repository shares a word with the paper", repo)
    check_cancel(cancel)
    lines = {f: (repo / f).read_text(encoding="utf-8", errors="replace").splitlines()
             for f in {r.function.file for r in ranked}}
    candidates = [Candidate(k, r, recordable(r.function, lines[r.function.file]))
                  for k, r in enumerate(ranked, start=1)]
    progress.start("looking for copies of the candidates' bodies", None)
    copies = copies_elsewhere(repo, [c.function for c in candidates])
    masked = masked_functions(bench, {repo_url or source_url(str(repo)), str(repo)}) if bench else {}
    for c in candidates:
        c.copies = copies[c.function.ref]
        c.task = masked.get((c.function.file, c.function.qualname))
    chosen = commands if commands is not None else default_commands(repo)
    report = CallerReport([], {})
    if sandbox is not None:
        targets = [c.function for c in candidates if c.not_recordable is None]
        report = find_callers(repo, targets, chosen, sandbox=sandbox, budget=budget, progress=progress,
                              cancel=cancel)
    for c in candidates:
        c.calls = report.calls.get(c.function.ref, Calls())
        c.caller = c.calls.caller(report.runs)
    ranked_count = sum(1 for f in index.functions if rankable(f))
    no_calls = f"ranked without calls: the repository's environment cannot be had ({report.unavailable})" \
        if report.unavailable else ""
    return Suggestion(candidates, report.runs, ranked_count, len(passages), chosen, no_calls)
