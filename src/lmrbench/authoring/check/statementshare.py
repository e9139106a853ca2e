"""How much of a body's statements a place repeats: the second test of a near-copy (after its fingerprints).

A place that holds half of a golden body's fingerprints can still repeat one block of it only: 29-Sophia's
``update_hessian`` repeats the state initialisation of the golden ``step`` (8 of its 23 simple statements) and
scores 0.57 on fingerprints, because the rest of ``step`` is a long keyword call whose normalised tokens
(``v = v ,``) make few distinct fingerprints. Counting statements weighs each line of the body once.
"""

from __future__ import annotations

import builtins
import keyword

from lmrbench import pyparse

MIN_STATEMENT_SHARE = 0.5
"""A place scoring under 1.0 is a near-copy only when it repeats at least this share (or the scan's threshold,
when lower) of the body's simple statements; the near-copies of the official set repeat 60% to 100%."""

Statement = tuple[int, ...] | tuple[str, ...]
"""One simple statement of a body: the hashes of its runs of ``k`` tokens, or its tokens when it is shorter."""


def statements(text: str, starts: list[int], words: list[str], hashes: list[int], k: int) -> tuple[Statement, ...]:
    """The simple statements of a body's ``text`` (tokens ``words`` starting at offsets ``starts``, ``hashes``
    of their runs of ``k``); () when the text is not Python."""
    out: list[Statement] = []
    for lo, hi in pyparse.simple_statement_spans(text):
        idx = [i for i, s in enumerate(starts) if lo <= s < hi]
        grams = tuple(hashes[i] for i in idx if i + k - 1 < len(words) and starts[i + k - 1] < hi)
        toks = tuple(words[i] for i in idx)
        if grams or toks:
            out.append(grams or toks)
    return tuple(out)


def statement_names(text: str, starts: list[int], words: list[str]) -> tuple[frozenset[str], ...]:
    """The kept names (attribute and called names: the normalized tokens that are identifiers other than ``v``)
    of each simple statement of a body, in the order of :func:`statements`."""
    out = []
    for lo, hi in pyparse.simple_statement_spans(text):
        toks = [words[i] for i, s in enumerate(starts) if lo <= s < hi]
        if toks:
            out.append(frozenset(w for w in toks if w.isidentifier() and w != "v" and not keyword.iskeyword(w)
                                 and w not in ("self", "cls")))
    return tuple(out)


def _repeated(st: Statement, found: set[int], span_words: list[str]) -> bool:
    if isinstance(st[0], int):
        return sum(h in found for h in st) * 2 >= len(st)
    n = len(st)
    return any(tuple(span_words[j : j + n]) == st for j in range(len(span_words) - n + 1))


def statement_share(body: tuple[Statement, ...], span_hashes: list[int], span_words: list[str]) -> float:
    """The share of ``body``'s statements repeated in a place (its run hashes and tokens): a statement is
    repeated when half of its runs are there, or, shorter than a run, when its tokens are; 1.0 for no
    statements."""
    return statement_gaps(body, (), span_hashes, span_words)[0]


def statement_gaps(body: tuple[Statement, ...], names: tuple[frozenset[str], ...], span_hashes: list[int],
                   span_words: list[str], around: set[str] | None = None) -> tuple[float, tuple[str, ...]]:
    """(:func:`statement_share`, what the place lacks): the names (``names``, per statement; builtins left
    out) of the body's statements the place does not repeat that appear nowhere ``around`` it (the words of its
    file, where helpers it calls may hold them; default: the place's own). A place lacking some holds a relative
    of the body without what distinguishes it (AdaLoRA's ``lora_E`` and ``ranknum``, in no line of LoRA's
    ``layers.py``)."""
    if not body:
        return 1.0, ()
    found = set(span_hashes)
    missing = [k for k, st in enumerate(body) if not _repeated(st, found, span_words)]
    present = set(span_words) | (around or set())
    lacks = {n for k in missing if k < len(names) for n in names[k] if not hasattr(builtins, n)} - present
    return 1 - len(missing) / len(body), tuple(sorted(lacks))

