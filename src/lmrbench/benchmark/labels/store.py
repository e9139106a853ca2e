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
from lmrbench.schemas.run import HumanLabel, JudgeCategory

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
    ) -> HumanLabel:
        """Write (or replace) a label; ``label`` is a category or a score 1-3; ``note`` None keeps the old one."""
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
        )
        save_model(self.run.label_path(self.annotator, task, impl), record)
        self._labels[(task, impl)] = record
        return record

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
