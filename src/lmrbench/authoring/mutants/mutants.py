"""Mutants of one function: whole-file sources that a good test suite should fail.

Each mutant changes one thing in the function's body (the docstring is kept). The first kinds are cheap and generic
(``mutant_sites``: a constant return, an input returned, a dropped term, a flipped sign, an index off by one,
``min``/``max`` or a reduction swapped, a comparison loosened); the others look like the mistakes real wrong answers
make (``mutant_mistakes``: a parameter pinned, an operator swapped, a condition negated, a mask dropped, arguments
swapped, a constant scaled, a branch removed, an update of ``self`` dropped from a branch, a result detached, a
``get`` taken as an index, a check for None dropped) and, in ``mutant_shapes``, a branch forced, a guard dropped, an
offset dropped, an optional argument's default path forced, an axis changed, a copy dropped, a power dropped, a wrap
dropped, the sign of zero taken as +1, a change in place made a new array, an axis not moved, and in ``mutant_pins``
a nested value pinned). The order is deterministic: the kinds take turns, and within a kind the sites come in source
order; mutants are de-duplicated, differ from the source and all parse.
``sample_mutants`` picks a few of every kind.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper, PositionProvider

from lmrbench import pyparse
from lmrbench.authoring.mutants import mutant_mistakes, mutant_pins, mutant_shapes, mutant_sites
from lmrbench.authoring.mutants.mutant_sites import Edit
from lmrbench.core.source._cst import Located
from lmrbench.errors import LmrError

MAX_MUTANTS = 80
"""Most mutants generated per function (the kinds take turns, so every kind with a site is in)."""
_T = TypeVar("_T")

LEGACY_KINDS = ("constant_return", "return_input", "drop_term", "flip_sign", "off_by_one", "swap_min_max",
                "swap_reduction", "compare")  # fmt: skip
"""The first kinds: generic changes."""
MISTAKE_KINDS = ("pin_parameter", "arith_swap", "negate", "drop_mask", "swap_args", "scale_constant",
                 "drop_branch", "detach", "force_branch", "drop_guard", "drop_offset", "default_path", "pin_nested",
                 "change_axis", "drop_reduction", "drop_copy", "drop_power", "drop_update", "drop_wrap",
                 "sign_zero", "rebind", "drop_move", "strict_get",
                 "drop_none_check")  # fmt: skip
"""Kinds shaped like real wrong answers."""
KINDS = (*LEGACY_KINDS, *MISTAKE_KINDS)
_RULES = (*mutant_sites.RULES, *mutant_mistakes.RULES, *mutant_shapes.RULES)
_PRECEDENCE = ("default_path", "pin_nested", "pin_parameter", "drop_guard", "drop_offset", "force_branch",
               "change_axis")  # fmt: skip
"""Where two kinds make the same file, the mutant takes the first of these kinds (the more telling name)."""
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
    """Replace one node (by identity) with a node, several statements, or nothing. ``above``: the ids of the nodes
    that hold it (``_Parents``); only those are entered, not every node of the function."""

    def __init__(self, old: cst.CSTNode, new: object, above: set[int] | None = None) -> None:
        self.old, self.new, self.above = old, new, above

    def on_visit(self, node: cst.CSTNode) -> bool:
        return self.above is None or id(node) in self.above

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):  # type: ignore[no-untyped-def]
        return self.new if original_node is self.old else updated_node


class _Parents(cst.CSTVisitor):
    """The parent of every node of a tree, by id."""

    def __init__(self) -> None:
        self.stack: list[cst.CSTNode] = []
        self.parent: dict[int, cst.CSTNode] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.stack:
            self.parent[id(node)] = self.stack[-1]
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()

    def above(self, node: cst.CSTNode) -> set[int]:
        """The ids of the nodes that hold ``node``, up to the root."""
        out: set[int] = set()
        while id(node) in self.parent:
            node = self.parent[id(node)]
            out.add(id(node))
        return out


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
    nested: Mapping[str, Sequence[object]] | None = None,
) -> list[Mutant]:
    """Up to ``limit`` mutants of one function, each a whole-file source with one change in its body.

    ``pins``: recorded values of the parameters (source text) for ``pin_parameter``; ``grad``: the recording
    saw a result that requires grad (only then are ``detach`` mutants made); ``kinds``: the kinds to make;
    ``nested``: recorded values of the chains the body or its helpers read, keyed by the path as written in the
    source (``self.cfg.loss.gamma`` -> ``[2.0]``), for ``pin_nested``.
    LmrError (naming the file) for a syntax error or an unknown function.
    """
    located = Located(source, file, [qualname])
    tree = pyparse.parse(source)
    helpers = mutant_shapes.helper_names(tree, qualname) if nested else []
    if helpers:
        try:
            located = Located(source, file, [qualname, *helpers])
        except LmrError:  # a helper LibCST names otherwise (a property's setter): its chains stay unpinned
            helpers = []
    arrays = mutant_sites.array_modules(tree)
    is_method = any(i.is_method for i in located.index if i.qualname == qualname)
    by_kind: dict[str, list[tuple[cst.FunctionDef, Edit]]] = {k: [] for k in kinds}
    for which, func in enumerate(located.defs(qualname)):
        module = located.module_of(qualname, which)
        positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        offset = located.line_offset(qualname, which)
        params = mutant_sites.params_of(func, is_method)
        found = mutant_sites.whole_body_edits(func, params, arrays)
        found["pin_parameter"] = mutant_mistakes.pin_edits(module, func, params, pins or {})
        found["pin_nested"] = mutant_pins.pin_chain_edits(module, func, "", nested or {})
        for kind, edits in found.items():
            if kind in by_kind:
                by_kind[kind].extend((func, e) for e in edits)
        site = _site_edits(module, func, kinds)
        site["default_path"] = mutant_shapes.default_path_edits(module, func,
                                                                mutant_mistakes.literal_defaults(module, func))
        if grad and "detach" in by_kind:
            site["detach"] = mutant_mistakes.detach_edits(module, func)
        for kind, edits in site.items():
            for e in edits:
                if kind not in by_kind:
                    continue
                line = positions[e.old].start.line + offset
                by_kind[kind].append((func, replace(e, description=f"line {line}: {e.description}")))
    if "pin_nested" in by_kind:
        for helper in helpers:
            for which, func in enumerate(located.defs(helper)):
                edits = mutant_pins.pin_chain_edits(located.module_of(helper, which), func, f"helper {helper}",
                                                      nested or {})
                by_kind["pin_nested"].extend((func, e) for e in edits)
    return _distinct(located, source, list(_round_robin(list(by_kind.values()))), limit)


def _distinct(located: Located, source: str, edits: list[tuple[cst.FunctionDef, Edit]], limit: int) -> list[Mutant]:
    """The first ``limit`` mutants of ``edits`` that parse and differ from the source and from each other;
    where two edits make the same file, the one whose kind comes first in ``_PRECEDENCE`` names it."""
    rank = {kind: k for k, kind in enumerate(_PRECEDENCE)}
    made: dict[str, tuple[int, int, Edit]] = {}
    parents: dict[int, _Parents] = {}
    for position, (func, edit) in enumerate(edits):
        if id(func) not in parents:
            parents[id(func)] = _Parents()
            func.visit(parents[id(func)])
        try:  # libcst refuses some replacements (a branch flattened in place of an ``elif``): no such mutant
            new = edit.new if edit.old is func else func.visit(
                _Replace(edit.old, edit.new, parents[id(func)].above(edit.old)))
            new_func = cst.ensure_type(new, cst.FunctionDef)
            text = located.rebuild({id(func): new_func})
            pyparse.parse(text)
        except (SyntaxError, ValueError, TypeError, cst.CSTValidationError):
            continue
        if text == source:
            continue
        held = made.get(text)
        mine = rank.get(edit.kind, len(rank))
        if held is None or mine < held[0]:
            made[text] = (mine, held[1] if held else position, edit)
    ordered = sorted(made.items(), key=lambda item: item[1][1])[:limit]
    return [Mutant(kind=e.kind, description=e.description, source=text, pinned=e.pinned)
            for text, (_, _, e) in ordered]


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
