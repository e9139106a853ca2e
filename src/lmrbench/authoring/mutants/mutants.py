"""Mutants of one function: whole-file sources that a good test suite should fail.

Each mutant changes one thing in the function's body (the docstring is kept). The first kinds are cheap and
generic (``mutant_sites``: a constant return, an input returned, a dropped term, a flipped sign, an index off by
one, ``min``/``max`` or a reduction swapped, a comparison loosened); the others look like the mistakes real
wrong answers make (``mutant_mistakes``: a parameter pinned, an operator swapped, a condition negated, a mask
dropped, arguments swapped, a constant scaled, a branch removed, a result detached). The order is
deterministic: the kinds take turns, and within a kind the sites come in source order; mutants are
de-duplicated, differ from the source and all parse. ``sample_mutants`` picks a few of every kind.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, PositionProvider

from lmrbench import pyparse
from lmrbench.authoring.mutants import mutant_mistakes, mutant_sites
from lmrbench.authoring.mutants.mutant_sites import Edit
from lmrbench.core.source._cst import Located

MAX_MUTANTS = 80
"""Most mutants generated per function (the kinds take turns, so every kind with a site is in)."""
_T = TypeVar("_T")

LEGACY_KINDS = ("constant_return", "return_input", "drop_term", "flip_sign", "off_by_one", "swap_min_max",
                "swap_reduction", "compare")  # fmt: skip
"""The first kinds: generic changes."""
MISTAKE_KINDS = ("pin_parameter", "arith_swap", "negate", "drop_mask", "swap_args", "scale_constant",
                 "drop_branch", "detach")  # fmt: skip
"""Kinds shaped like real wrong answers."""
KINDS = (*LEGACY_KINDS, *MISTAKE_KINDS)
_RULES = (*mutant_sites.RULES, *mutant_mistakes.RULES)
_ANY_SITE = m.OneOf(*(matcher for matcher, _ in _RULES))


@dataclass
class Mutant:
    """One mutant: what kind of change, where (in words), and the whole mutated file."""

    kind: str
    description: str
    source: str
    pinned: str = ""
    """For ``pin_parameter``: the parameter pinned."""

    @property
    def digest(self) -> str:
        """A short hash of the mutated file: the same mutant has the same digest in recording and validation."""
        return hashlib.sha256(self.source.encode("utf-8")).hexdigest()[:16]


class _Replace(cst.CSTTransformer):
    """Replace one node (by identity) with a node, several statements, or nothing."""

    def __init__(self, old: cst.CSTNode, new: object) -> None:
        self.old, self.new = old, new

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[no-untyped-def]
        return self.new if original_node is self.old else updated_node


def _site_edits(module: cst.Module, func: cst.FunctionDef, kinds: Sequence[str]) -> dict[str, list[Edit]]:
    """Edits at single sites of the body (after the docstring), by kind, in source order."""
    edits: dict[str, list[Edit]] = {}
    for stmt in mutant_sites.body_statements(func):
        for node in m.findall(stmt, _ANY_SITE):
            for matcher, rule in _RULES:
                if m.matches(node, matcher):
                    for edit in rule(module, node):
                        if edit.kind in kinds:
                            edits.setdefault(edit.kind, []).append(edit)
    return edits


def _round_robin(groups: list[list[_T]]) -> Iterator[_T]:
    """Items of the groups taking turns: a1, b1, c1, a2, b2, ..."""
    longest = max((len(g) for g in groups), default=0)
    for i in range(longest):
        for group in groups:
            if i < len(group):
                yield group[i]


def generate_mutants(
    source: str,
    qualname: str,
    *,
    file: str = "<source>",
    limit: int = MAX_MUTANTS,
    pins: dict[str, str] | None = None,
    grad: bool = False,
    kinds: Sequence[str] = KINDS,
) -> list[Mutant]:
    """Up to ``limit`` mutants of one function, each a whole-file source with one change in its body.

    ``pins``: recorded values of the parameters (source text) for ``pin_parameter``; ``grad``: the recording
    saw a result that requires grad (only then are ``detach`` mutants made); ``kinds``: the kinds to make.
    LmrError (naming the file) for a syntax error or an unknown function.
    """
    located = Located(source, file, [qualname])
    arrays = mutant_sites.array_modules(pyparse.parse(source))
    is_method = any(i.is_method for i in located.index if i.qualname == qualname)
    by_kind: dict[str, list[tuple[cst.FunctionDef, Edit]]] = {k: [] for k in kinds}
    for which, func in enumerate(located.defs(qualname)):
        module = located.module_of(qualname, which)
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        offset = located.line_offset(qualname, which)
        params = mutant_sites.params_of(func, is_method)
        found = mutant_sites.whole_body_edits(func, params, arrays)
        found["pin_parameter"] = mutant_mistakes.pin_edits(module, func, params, pins or {})
        for kind, edits in found.items():
            if kind in by_kind:
                by_kind[kind].extend((func, e) for e in edits)
        site = _site_edits(module, func, kinds)
        if grad and "detach" in by_kind:
            site["detach"] = mutant_mistakes.detach_edits(module, func)
        for kind, edits in site.items():
            for e in edits:
                line = positions[e.old].start.line + offset
                by_kind[kind].append((func, replace(e, description=f"line {line}: {e.description}")))
    seen = {source}
    out: list[Mutant] = []
    for func, edit in _round_robin(list(by_kind.values())):
        if len(out) >= limit:
            break
        try:  # libcst refuses some replacements (a branch flattened in place of an ``elif``): no such mutant
            new = edit.new if edit.old is func else func.visit(_Replace(edit.old, edit.new))
            new_func = cst.ensure_type(new, cst.FunctionDef)
            text = located.rebuild({id(func): new_func})
            pyparse.parse(text)
        except (SyntaxError, ValueError, TypeError, cst.CSTValidationError):
            continue
        if text not in seen:
            seen.add(text)
            out.append(Mutant(kind=edit.kind, description=edit.description, source=text, pinned=edit.pinned))
    return out


def sample_mutants(mutants: Sequence[_T], limit: int, kind_of: object = None, seed: int = 0) -> list[_T]:
    """At most ``limit`` of ``mutants``: the kinds take turns, each kind's mutants in a seeded random order
    (deterministic); the picks keep the input's order. ``kind_of`` maps an item to its kind (default ``.kind``)."""
    if limit <= 0:
        return []
    if len(mutants) <= limit:
        return list(mutants)
    key = kind_of if callable(kind_of) else (lambda item: item.kind)  # type: ignore[attr-defined]
    groups: dict[str, list[int]] = {}
    for i, item in enumerate(mutants):
        groups.setdefault(str(key(item)), []).append(i)
    rng = random.Random(seed)
    for members in groups.values():
        rng.shuffle(members)
    picked = sorted(list(_round_robin(list(groups.values())))[:limit])
    return [mutants[i] for i in picked]
