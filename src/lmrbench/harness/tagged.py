"""What fills the goal functions of a run, its kind and its trust stated by its type (a tagged union): the
task's golden code, the task as shipped (masked), a mutant of the golden code, or a candidate's answer."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

from lmrbench.core.source.tree import Variant

VariantKind = Literal["golden", "masked", "mutant", "candidate"]


@dataclass(frozen=True)
class Golden:
    """The task's golden code (trusted)."""

    kind: ClassVar[VariantKind] = "golden"
    trusted: ClassVar[bool] = True

    def source(self) -> Variant:
        """What the tree builder splices in."""
        return "golden"


@dataclass(frozen=True)
class Masked:
    """The task as shipped, its goal functions masked (trusted)."""

    kind: ClassVar[VariantKind] = "masked"
    trusted: ClassVar[bool] = True

    def source(self) -> Variant:
        """What the tree builder splices in."""
        return "masked"


@dataclass(frozen=True)
class Mutant:
    """The golden code with one mistake made in it, as goal files (trusted: the task's own code)."""

    files: dict[str, str]
    kind: ClassVar[VariantKind] = "mutant"
    trusted: ClassVar[bool] = True

    def source(self) -> Variant:
        """What the tree builder splices in."""
        return dict(self.files)


@dataclass(frozen=True)
class Candidate:
    """A model's or agent's answer (untrusted): goal files already read as data, or a folder shaped like the
    repository (or the task folder) holding them."""

    files: dict[str, str] = field(default_factory=dict)
    folder: Path | None = None
    kind: ClassVar[VariantKind] = "candidate"
    trusted: ClassVar[bool] = False

    def source(self) -> Variant:
        """What the tree builder splices in."""
        return self.folder if self.folder is not None else dict(self.files)


TaggedVariant = Golden | Masked | Mutant | Candidate
"""What fills the goal functions of a run, its kind and trust stated by its type."""
