"""A draft task: a hidden folder in the task set where a new task is cloned, recorded and validated before Save.

Layout of ``<bench>/.lmrbench-draft-XXXX/``: ``source/`` (the clone the author picks functions from), ``tasks/``
(the draft task, made again whenever its functions or mask change, renamed when its name does), ``validate/``
(its results).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from lmrbench.authoring.task.metadata import repo_folder_name
from lmrbench.authoring.task.task_spec import TaskSpec

__all__ = ["DRAFT_PREFIX", "Draft", "draft_key", "leftover_drafts", "repo_folder_name"]

DRAFT_PREFIX = ".lmrbench-draft-"


def draft_key(spec: TaskSpec) -> tuple[object, ...]:
    """What the draft task is made from (its name last): when it changes the draft task is made again (and recorded
    again), or only renamed when the name alone changed."""
    functions = tuple((f.file, f.qualname) for f in spec.functions)
    return (spec.source, functions, str(spec.mask_style), spec.name)


def validated_key(spec: TaskSpec) -> tuple[object, ...]:
    """Everything a validation of the draft task depends on: the draft task itself and the instruction and metadata
    written into its info.json (the task set's fingerprint includes info.json). A validation made for another key
    is stale."""
    fields = (tuple(spec.instructions), spec.paper_name, spec.paper_url, spec.year, str(spec.category),
              tuple(spec.retrieval_context))  # fmt: skip
    return (*draft_key(spec), fields)


def validation_state(validated: tuple[object, ...] | None, spec: TaskSpec) -> str:
    """``none`` (no valid validation), ``current`` or ``stale`` (the spec changed since the validation)."""
    if validated is None:
        return "none"
    return "current" if validated == validated_key(spec) else "stale"


@dataclass
class Draft:
    """One draft folder; ``key`` is the draft_key of the task made in it (None: not made yet)."""

    path: Path
    key: tuple[object, ...] | None = field(default=None)

    @classmethod
    def create(cls, bench: Path) -> Draft:
        """A new, empty draft folder in the task set."""
        return cls(Path(tempfile.mkdtemp(prefix=DRAFT_PREFIX, dir=bench)))

    @property
    def source_dir(self) -> Path:
        """Where the repository is cloned."""
        return self.path / "source"

    @property
    def tasks_dir(self) -> Path:
        """The task set holding the draft task."""
        return self.path / "tasks"

    @property
    def results_dir(self) -> Path:
        """The draft task's validation results (moved with the task on Save)."""
        return self.path / "validate"

    def needs_task(self, spec: TaskSpec) -> str:
        """What the draft task needs for ``spec``: ``""`` (nothing), ``"rename"`` (only its name changed: renamed,
        its recorded tests stay) or ``"make"`` (made again); remembers ``spec`` as made."""
        key = draft_key(spec)
        made, self.key = self.key, key
        if key == made:
            return ""
        return "rename" if made is not None and made[:-1] == key[:-1] else "make"

    def remove(self) -> None:
        """Delete the draft folder and everything in it."""
        shutil.rmtree(self.path, ignore_errors=True)


def leftover_drafts(bench: Path) -> list[Path]:
    """Draft folders a crashed session left in a task set."""
    return sorted(p for p in Path(bench).glob(DRAFT_PREFIX + "*") if p.is_dir())
