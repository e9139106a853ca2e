"""Wrong answers written as one edit of the golden code, for the benchmark corpora of plausible wrong answers."""

from __future__ import annotations

from collections.abc import Callable


def editor(head: str, body: str) -> Callable[[str, str], str]:
    """``edit(old, new)``: ``head`` (the signature, or the code before the body) and ``body`` with ``old``, which
    must occur in ``body``, replaced by ``new``."""

    def edit(old: str, new: str) -> str:
        assert old in body, old
        return head + body.replace(old, new)

    return edit
