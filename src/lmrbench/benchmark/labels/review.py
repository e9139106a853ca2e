"""A review session: one annotator's queue over one run, what each item shows, and labelling it.

The queue is the annotator's assigned queue (``label assign``) or else every candidate with code; labels this
annotator gave earlier on items since assigned to others stay (they count) and are listed after the queue, marked
"reassigned", so they can be kept or cleared. Each item carries the golden and candidate goal functions, the
unit-test outcome with the failing tests' messages and the judge's verdict. In blind mode (the default) both the
tests' outcome and the verdict are withheld until this annotator has labelled the item, so neither anchors the
label. A label can be marked unsure, cleared, or undone; an item can be skipped (a skip is not a label). Only this
annotator's labels are read: another annotator's labels are never loaded.
"""

from __future__ import annotations

import getpass
import os
import re
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from lmrbench.benchmark.labels.assign import reviewable
from lmrbench.benchmark.labels.store import LabelStore, check_annotator
from lmrbench.benchmark.pipeline.judge import scoped_sources
from lmrbench.benchmark.pipeline.rundir import RunDir, slug, unless_broken
from lmrbench.core.taskset import Task, load_taskset
from lmrbench.errors import LmrError
from lmrbench.schemas.run import EvalResult, HumanLabel, ResultStatus, Verdict

SCALE = {1: "logically incorrect", 2: "logically correct", 3: "completely correct"}


class Filter(StrEnum):
    """Which items the queue shows."""

    ALL = "all"
    UNLABELLED = "unlabelled"
    SKIPPED = "skipped"
    UNSURE = "unsure"
    VS_JUDGE = "disagrees with judge"
    VS_TESTS = "disagrees with tests"


@dataclass
class ReviewItem:
    """One candidate to label."""

    task: str
    impl: int
    model: str
    shared: bool = False
    reassigned: bool = False
    """Not in this annotator's queue any more (``label assign`` gave it to others), listed for a label given before."""
    digest: str = ""
    instruction: str = ""
    golden: str = ""
    candidate: str = ""
    source_error: str = ""
    result: EvalResult | None = None
    verdict: Verdict | None = None
    loaded: bool = False
    """True once the goal functions were read (they are read when the item is first shown)."""
    source: Task | None = field(default=None, repr=False)
    others: list[HumanLabel] = field(default_factory=list)
    """Every annotator's label, read only for a run without candidate code (an imported one), which is shown
    and never labelled."""

    @property
    def key(self) -> tuple[str, int]:
        """(task, impl)."""
        return (self.task, self.impl)

    @property
    def tests_passed(self) -> bool | None:
        """True/False for a scored test run, None for no result or an infrastructure error."""
        if self.result is None or self.result.status is ResultStatus.INFRA_ERROR:
            return None
        if self.digest and self.result.candidate_digest != self.digest:
            return None
        return self.result.status is ResultStatus.PASSED

    @property
    def judge_score(self) -> int | None:
        """The judge's score on the paper's scale, or None."""
        v = self.verdict
        if v is None or v.category is None or (self.digest and v.candidate_digest != self.digest):
            return None
        return v.category.score


def default_annotator() -> str:
    """$LMRBENCH_ANNOTATOR, else the login name, made safe for a folder name."""
    name = os.environ.get("LMRBENCH_ANNOTATOR") or getpass.getuser() or "annotator"
    return slug(name)


@dataclass
class ReviewSession:
    """One annotator's queue over one run."""

    run: RunDir
    annotator: str
    items: list[ReviewItem]
    store: LabelStore
    blind: bool = True
    judge: str = ""
    notes: dict[tuple[str, int], str] = field(default_factory=dict)
    undo_stack: list[tuple[ReviewItem, HumanLabel | None, bool]] = field(default_factory=list)
    """(item, its label before, skipped before) of every change, the last one last."""
    read_only: bool = False
    """The run holds no candidate code (``label import-official``): its labels, verdicts and test outcomes are
    shown, nothing is labelled."""

    def label_of(self, item: ReviewItem) -> HumanLabel | None:
        """This annotator's current label of an item (a label of an older candidate does not count)."""
        lab = self.store.get(item.task, item.impl)
        if lab is None or (item.digest and lab.candidate_digest != item.digest):
            return None
        return lab

    def skipped(self, item: ReviewItem) -> bool:
        """True when this annotator skipped the item and has not labelled it since."""
        return self.label_of(item) is None and self.store.skipped(item.task, item.impl, item.digest)

    def progress(self) -> tuple[int, int, int]:
        """(labelled, skipped, total)."""
        labelled = sum(1 for i in self.items if self.label_of(i) is not None)
        return labelled, sum(1 for i in self.items if self.skipped(i)), len(self.items)

    def revealed(self, item: ReviewItem) -> bool:
        """The tests' outcome and the verdict show when blind mode is off or this annotator has labelled the item."""
        return not self.blind or self.label_of(item) is not None

    def first_unlabelled(self) -> int:
        """Position where the annotator resumes: the first item neither labelled nor skipped, else the first
        skipped one, else 0."""
        todo = [k for k, i in enumerate(self.items) if self.label_of(i) is None]
        return next((k for k in todo if not self.skipped(self.items[k])), todo[0] if todo else 0)

    def matches(self, item: ReviewItem, which: Filter) -> bool:
        """Whether an item passes a filter (disagreements need this annotator's label)."""
        lab = self.label_of(item)
        if which is Filter.ALL:
            return True
        if which is Filter.UNLABELLED:
            return lab is None
        if which is Filter.SKIPPED:
            return self.skipped(item)
        if lab is None:
            return False
        if which is Filter.UNSURE:
            return lab.unsure
        if which is Filter.VS_JUDGE:
            return item.judge_score is not None and item.judge_score != lab.label.score
        passed = item.tests_passed
        return passed is not None and passed != (lab.label.score == 3)

    def visible(self, which: Filter) -> list[int]:
        """Positions of the items that pass a filter."""
        return [k for k, i in enumerate(self.items) if self.matches(i, which)]

    def _remember(self, item: ReviewItem) -> None:
        self.undo_stack.append((item, self.store.get(item.task, item.impl), self.skipped(item)))

    def label(self, item: ReviewItem, score: int, *, unsure: bool = False) -> HumanLabel:
        """Label an item 1-3 (saved at once, atomically); a comment typed before labelling goes with it."""
        self._remember(item)
        note = self.notes.pop(item.key, None)
        return self.store.save(item.task, item.impl, score, note=note, candidate_digest=item.digest, unsure=unsure)

    def toggle_unsure(self, item: ReviewItem) -> HumanLabel:
        """Mark the item's label unsure, or sure again; LmrError when it has no label."""
        lab = self.label_of(item)
        if lab is None:
            raise LmrError(f"{item.task}#{item.impl} has no label yet: label it (1, 2 or 3), then mark it unsure")
        self._remember(item)
        record = lab.model_copy(update={"unsure": not lab.unsure})
        self.store.put(item.task, item.impl, record)
        return record

    def clear(self, item: ReviewItem) -> HumanLabel | None:
        """Remove this annotator's label of the item (and a skip); returns the label removed."""
        self._remember(item)
        self.store.unskip(item.task, item.impl)
        return self.store.clear(item.task, item.impl)

    def skip(self, item: ReviewItem) -> None:
        """Pass over an unlabelled item for now; LmrError when it is labelled (clear the label first)."""
        if self.label_of(item) is not None:
            raise LmrError(f"{item.task}#{item.impl} is labelled: clear the label (x) to skip it")
        self._remember(item)
        self.store.skip(item.task, item.impl, item.digest)

    def undo(self) -> ReviewItem | None:
        """Put back the label and skip of the last change; returns its item (None: nothing to undo)."""
        if not self.undo_stack:
            return None
        item, prior, was_skipped = self.undo_stack.pop()
        self.store.put(item.task, item.impl, prior)
        if was_skipped:
            self.store.skip(item.task, item.impl, item.digest)
        else:
            self.store.unskip(item.task, item.impl)
        return item

    def comment(self, item: ReviewItem, note: str) -> HumanLabel | None:
        """Set the comment: saved at once when the item is labelled, else kept until it is."""
        if self.label_of(item) is None:
            self.notes[item.key] = note
            return None
        return self.store.comment(item.task, item.impl, note)

    def sources(self, item: ReviewItem) -> ReviewItem:
        """The item with its goal functions read (parsing goal files is the slow part: done on first show)."""
        return load_sources(self.run, item)

    def note_of(self, item: ReviewItem) -> str:
        """The comment shown for an item (saved, or typed and waiting for the label)."""
        lab = self.label_of(item)
        return self.notes.get(item.key, lab.note if lab else "")


def _task_map(bench: Path, names: list[str]) -> dict[str, Task]:
    """The tasks named (only these are read: a large task set opens as fast as a small one)."""
    tasks, _ = load_taskset(bench, only=sorted(set(names)))
    return {t.name: t for t in tasks}


def load_item(run: RunDir, task: Task | None, key: tuple[str, int], model: str, judge: str) -> ReviewItem:
    """Everything shown for one candidate but its code (see ``load_sources``)."""
    name, index = key
    cand = run.candidate(name, index)
    item = ReviewItem(task=name, impl=index, model=model, digest=cand.digest if cand else "")
    item.result = unless_broken(run.result, name, index)
    item.verdict = unless_broken(run.verdict, judge, name, index) if judge else None
    if task is None:
        item.source_error = f"task {name} is not in the task set"
        return item
    impl = next((i for i in task.info.implementations if i.index == index), None)
    if impl is None:
        item.source_error = f"{name} has no implementation {index}"
        return item
    item.instruction = impl.instruction
    item.source = task
    return item


def load_sources(run: RunDir, item: ReviewItem) -> ReviewItem:
    """Read the golden and candidate goal functions of an item once (an unreadable file becomes ``source_error``)."""
    if item.loaded or item.source is None or item.source_error:
        item.loaded = True
        return item
    impl = next(i for i in item.source.info.implementations if i.index == item.impl)
    try:
        item.golden, item.candidate = scoped_sources(run, item.source, impl)
    except LmrError as exc:
        item.source_error = str(exc)
    item.loaded = True
    return item


def open_session(
    bench: Path, run_path: Path, annotator: str | None = None, *, blind: bool = True, judge: str | None = None
) -> ReviewSession:
    """Open the review of a run for one annotator; LmrError when the run or the names do not fit."""
    run = RunDir(Path(run_path))
    manifest = run.require_manifest()
    name = check_annotator(annotator or default_annotator())
    judges = run.judges()
    if judge is not None and judge not in judges:
        raise LmrError(f"no verdicts of judge {judge!r} (judges here: {', '.join(judges) or 'none'})", run.path)
    chosen = judge or (judges[0] if judges else "")
    queue = run.queue(name)
    keys = [(q.task, q.impl) for q in queue.items] if queue else reviewable(run)
    shared = {(q.task, q.impl) for q in queue.items if q.shared} if queue else set()
    if not keys:
        held = held_items(run, chosen)
        if not held:
            raise LmrError(f"nothing to review for {name}: no candidate with code, no queue, and no labels, "
                           "verdicts or test results to show", run.path)
        tasks = _task_map(Path(bench), [k[0] for k in held])
        model = manifest.label or run.path.name
        items = [load_item(run, tasks.get(k[0]), k, model, chosen) for k in held]
        every = sorted(run.labels(), key=lambda lab: lab.annotator)
        for it in items:
            it.others = [lab for lab in every if (lab.task, lab.impl) == it.key]
            it.source_error = it.source_error or "this run holds no candidate code (imported results): nothing to label"
            it.loaded = True
        return ReviewSession(run=run, annotator=name, items=items, store=LabelStore(run, name), blind=False,
                             judge=chosen, read_only=True)
    store = LabelStore(run, name)
    reassigned = [k for k in store.all() if k not in set(keys)] if queue else []
    tasks = _task_map(Path(bench), [k[0] for k in keys + reassigned])
    model = manifest.label or run.path.name
    items = [load_item(run, tasks.get(k[0]), k, model, chosen) for k in keys + reassigned]
    for it in items:
        it.shared = it.key in shared
        it.reassigned = it.key in reassigned
    return ReviewSession(run=run, annotator=name, items=items, store=store, blind=blind, judge=chosen)


def held_items(run: RunDir, judge: str) -> list[tuple[str, int]]:
    """(task, impl) of everything a run without candidate code holds (every annotator's labels, the judge's
    verdicts, the tests' results), sorted: what an imported official run is made of."""
    keys = {(lab.task, lab.impl) for lab in run.labels()}
    keys |= {(r.task, r.impl) for r in run.results()}
    if judge:
        keys |= {(v.task, v.impl) for v in run.verdicts(judge)}
    return sorted(keys)


def labels_text(item: ReviewItem) -> str:
    """Every annotator's label of an item, one per line (a read-only review of an imported run)."""
    if not item.others:
        return "no labels"
    return "\n".join(f"{lab.annotator}: {lab.label.score} {SCALE[lab.label.score]}"
                     + (f" · {lab.note}" if lab.note else "") for lab in item.others)


def verdict_text(item: ReviewItem) -> tuple[str, list[str]]:
    """("<score> <name>", rationale) of the judge, or a line saying there is none."""
    score = item.judge_score
    if score is None:
        reason = item.verdict.reason if item.verdict is not None else "not judged"
        return f"no verdict ({reason or 'stale'})", []
    return f"{score} {SCALE[score]}", list(item.verdict.rationale if item.verdict else [])


def tests_text(item: ReviewItem) -> tuple[str, list[str]]:
    """(one-line outcome, failing test messages) of the unit tests."""
    r = item.result
    if r is None:
        return "not evaluated", []
    if item.digest and r.candidate_digest != item.digest:
        return "stale result (the candidate changed since)", []
    head = f"{r.status.value}, {r.passed_tests} of {r.total_tests} cases passed"
    if r.weaker_evidence or r.isolation == "shared":
        head += f" (weaker evidence: {'local runner' if r.sandbox == 'local' else 'not a split run'})"
    if r.reason and not re.match(r"\d+ of \d+ cases (failed|passed)", r.reason):
        head += f": {r.reason}"
    lines = [f"{tid}: {msg}" for tid, msg in r.failures.items()]
    if r.log_file:
        lines.append(f"the whole test output: results/{item.task}/{r.log_file}")
    return head, lines

