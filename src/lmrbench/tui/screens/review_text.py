"""The review screen's texts of one item: the labels it holds, the judge's verdict, the reader's own label."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

if TYPE_CHECKING:
    from lmrbench.benchmark.labels.review import ReviewItem, ReviewSession


def labels_text(item: ReviewItem) -> Text:
    """Every annotator's label of the item."""
    from lmrbench.benchmark.labels.review import labels_text as text_of

    return Text.assemble(("Labels: ", "bold"), "\n" if item.others else "", text_of(item))


def judge_text(item: ReviewItem) -> Text:
    """The judge's verdict and its reasons."""
    from lmrbench.benchmark.labels.review import verdict_text

    head, bullets = verdict_text(item)
    text = Text.assemble(("Judge: ", "bold"), head)
    for b in bullets:
        text.append(f"\n  - {b}")
    return text


def label_text(session: ReviewSession, item: ReviewItem, pinned: bool) -> Text:
    """The reader's label of the item (``pinned``: it was just given, so say how to go on), or, in a read-only
    review, the labels it holds."""
    from lmrbench.benchmark.labels.review import SCALE

    if session.read_only:
        return labels_text(item)
    lab = session.label_of(item)
    note = session.note_of(item)
    text = Text.assemble(("Your label: ", "bold"))
    if lab is not None:
        text.append(f"{lab.label.score} {SCALE[lab.label.score]}" + (" (unsure)" if lab.unsure else ""))
        if pinned:
            text.append("  · n: next item, z: undo", style="dim")
    else:
        text.append("skipped (1, 2 or 3 labels it)" if session.skipped(item) else "none yet (1, 2 or 3)")
    if note:
        text.append(f"\nComment: {note}" + ("" if lab else " (saved with the label)"))
    return text
