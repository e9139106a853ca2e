"""One annotator's labels in a run: read, and write one label at a time, atomically.

Each label is its own file under ``labels/<annotator>/``, written through a temp file and a rename, so a label
is on disk the moment it is given, a crash never leaves half a file, and two annotators never write the same
file. A store reads its own annotator's folder only: nothing here returns another annotator's labels.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from lmrbench.benchmark.pipeline.rundir import RunDir, load_model, save_model
from lmrbench.errors import LmrError
from lmrbench.schemas.run import HumanLabel, JudgeCategory, SkipList, SkippedItem

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def check_annotator(name: str) -> str:
    """The annotator's name, or LmrError: letters, digits, dot, dash and underscore, starting with a letter or digit."""
    if not _NAME.fullmatch(name or ""):
        raise LmrError(
            f"annotator name {name!r} is not usable: use letters, digits, '.', '-' or '_' (at most 64 characters)"
        )
    return name


class LabelStore:
    """The labels of one annotator in one run folder."""

    def __init__(self, run: RunDir, annotator: str) -> None:
        self.run = run
        self.annotator = annotator
        self._labels: dict[tuple[str, int], HumanLabel] = {
            (lab.task, lab.impl): lab for lab in run.labels(annotator)
        }
        path = run.skips_path(annotator)
        skips = load_model(path, SkipList).items if path.is_file() else []
        self._skips: dict[tuple[str, int], SkippedItem] = {(s.task, s.impl): s for s in skips}

    def get(self, task: str, impl: int) -> HumanLabel | None:
        """This annotator's label of a candidate, or None."""
        return self._labels.get((task, impl))

    def all(self) -> dict[tuple[str, int], HumanLabel]:
        """Every label of this annotator, by (task, impl)."""
        return dict(self._labels)

    def save(
        self,
        task: str,
        impl: int,
        label: JudgeCategory | int,
        *,
        note: str | None = None,
        candidate_digest: str = "",
        unsure: bool = False,
    ) -> HumanLabel:
        """Write (or replace) a label; ``label`` is a category or a score 1-3; ``note`` None keeps the old one.
        A labelled item is no longer skipped."""
        category = label if isinstance(label, JudgeCategory) else _from_score(label)
        prior = self._labels.get((task, impl))
        record = HumanLabel(
            task=task,
            impl=impl,
            label=category,
            annotator=self.annotator,
            note=(prior.note if prior else "") if note is None else note,
            candidate_digest=candidate_digest,
            labelled_at=datetime.now(UTC).isoformat(timespec="seconds"),
            unsure=unsure,
        )
        save_model(self.run.label_path(self.annotator, task, impl), record)
        self._labels[(task, impl)] = record
        self.unskip(task, impl)
        return record

    def put(self, task: str, impl: int, record: HumanLabel | None) -> None:
        """Set a candidate's label file to ``record`` exactly (None: no label), as it was before (undo)."""
        path = self.run.label_path(self.annotator, task, impl)
        if record is None:
            path.unlink(missing_ok=True)
            self._labels.pop((task, impl), None)
        else:
            save_model(path, record)
            self._labels[(task, impl)] = record

    def clear(self, task: str, impl: int) -> HumanLabel | None:
        """Remove this annotator's label of a candidate (the file goes); returns the label removed."""
        prior = self._labels.get((task, impl))
        self.put(task, impl, None)
        return prior

    def skipped(self, task: str, impl: int, candidate_digest: str = "") -> bool:
        """True when this annotator skipped this candidate (a skip of an older candidate does not count)."""
        skip = self._skips.get((task, impl))
        return skip is not None and (not candidate_digest or skip.candidate_digest == candidate_digest)

    def skip(self, task: str, impl: int, candidate_digest: str = "") -> None:
        """Mark a candidate skipped (written at once; a skip is not a label)."""
        self._skips[(task, impl)] = SkippedItem(task=task, impl=impl, candidate_digest=candidate_digest)
        self._save_skips()

    def unskip(self, task: str, impl: int) -> None:
        """Forget a skip (nothing is written when there was none)."""
        if self._skips.pop((task, impl), None) is not None:
            self._save_skips()

    def _save_skips(self) -> None:
        skips = SkipList(annotator=self.annotator, items=list(self._skips.values()))
        save_model(self.run.skips_path(self.annotator), skips)

    def comment(self, task: str, impl: int, note: str) -> HumanLabel:
        """Set the comment of a labelled candidate; LmrError when it has no label yet."""
        prior = self._labels.get((task, impl))
        if prior is None:
            raise LmrError(f"{task}#{impl} has no label yet: label it (1, 2 or 3) before commenting")
        record = prior.model_copy(update={"note": note})
        save_model(self.run.label_path(self.annotator, task, impl), record)
        self._labels[(task, impl)] = record
        return record

    def reload(self, task: str, impl: int) -> HumanLabel | None:
        """Read one label back from disk (what a restarted app would see)."""
        path = self.run.label_path(self.annotator, task, impl)
        return load_model(path, HumanLabel) if path.is_file() else None


def _from_score(score: int) -> JudgeCategory:
    try:
        return JudgeCategory.from_score(score)
    except ValueError as exc:
        raise LmrError(str(exc)) from None
