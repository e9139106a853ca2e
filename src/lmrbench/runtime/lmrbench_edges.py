"""Comparisons met at their boundary, for the search (``lmrbench_search``): the golden function run with each of
its comparisons tapped (the host writes the tapped source: ``authoring/record/compare_taps.py``), so that the
search knows which inputs made both sides of a comparison equal, and can make inputs that do.

A mutant that moves a comparison's boundary (``>`` for ``>=``) differs from the golden code only where both sides
are equal. It is shown equivalent only when some input tried met that boundary and the mutant still agreed (``x if x
> 0 else 0``); where no input met it (``scores > score_threshold`` with every recorded score far from the
threshold) it is live, and named. The inputs that meet it set the leaf on one side of the comparison to a value the
other side took in a recorded call (``score_threshold`` to a score): equal to one, between the two largest, above
them all, and below them all. An input where both sides are floats and equal is a knife edge (a one-ulp move of
the scores flips it), so such a mutant is named as one that only a knife edge separates; ints are exact.
"""

from __future__ import annotations

import contextlib
import math
import operator
from typing import Any

import lmrbench_leaves as ll

TAP = "_lmrbench_compare"
"""The name the tapped source calls in place of each comparison: ``_lmrbench_compare(k, left, right, op)``."""
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
MAX_VALUES = 4096
"""Most values kept of a comparison's other side per recorded call."""
EDGE_VALUES = 5
"""Most values tried per comparison and base call."""


class Taps:
    """The golden function with its comparisons tapped (``sites``: per comparison, its text, the leaf on one
    side (``score_threshold``, ``self.cfg.clip``) and which side it is on): which comparisons an input met at
    their boundary (``met``), and the values each one's other side took (``values``)."""

    def __init__(self, sites: list[dict[str, Any]]) -> None:
        self.sites = sites
        self.target: Any = None
        self.met: set[int] = set()
        self.values: dict[int, list[float]] = {}
        self.collect = False

    def compare(self, k: int, left: Any, right: Any, op: str) -> Any:
        """``left op right``, noting whether both sides met and, when collecting, the other side's values."""
        result = OPS[op](left, right)
        with contextlib.suppress(Exception):  # what cannot be noted (an object compared) changes nothing
            self._note(k, left, right)
        return result

    def _note(self, k: int, left: Any, right: Any) -> None:
        import numpy as np

        if k not in self.met:
            a, b = np.asarray(left), np.asarray(right)
            if a.dtype.kind in "biuf" and b.dtype.kind in "biuf" and bool(np.any(a == b)):
                self.met.add(k)
        site = self.sites[k] if k < len(self.sites) else {}
        if self.collect and site.get("leaf"):
            other = np.asarray(left if site.get("side") == "right" else right, dtype=float).ravel()
            store = self.values.setdefault(k, [])
            if len(store) < MAX_VALUES:
                store.extend(other[np.isfinite(other)][: MAX_VALUES - len(store)].tolist())

    def run(self, case: dict[str, Any], arrays: dict[str, Any], collect: bool = False) -> None:
        """Call the tapped function on the case (what it raises is the golden code's own concern)."""
        if self.target is None:
            return
        self.collect = collect
        with contextlib.suppress(Exception):  # the search's Timeout is an Exception too
            self.target.call(case, arrays)
        self.collect = False

    def unmet(self, sites: list[int]) -> bool:
        """True when some comparison of ``sites`` no input has met yet."""
        return any(k not in self.met for k in sites)


def edge_values(values: list[float], was: Any) -> list[Any]:
    """Values for a leaf recorded as ``was`` that meet a comparison whose other side took ``values``: the first
    of them, the one nearest ``was``, the largest, between the two largest, above and below them all; of
    ``was``'s type (an int leaf takes them rounded down) and sign (a leaf recorded positive stays so: ``top_p`` 0
    keeps nothing, where a correct program keeps the top token)."""
    distinct = sorted(set(values))
    if not distinct or type(was) not in (int, float):
        return []
    top, low = distinct[-1], distinct[0]
    out = [values[0], min(distinct, key=lambda v: abs(v - was)), top]
    out += [(top + distinct[-2]) / 2] if len(distinct) > 1 else []
    out += [top + max(abs(top), 1.0) / 2, low - max(abs(low), 1.0) / 2]
    kept: list[Any] = []
    for v in out:
        if not math.isfinite(v):
            continue
        v = math.floor(v) if type(was) is int else v  # between two counts: the lower one's side
        if v != was and not (was >= 0 and v < 0 or was > 0 and v == 0) and v not in kept:
            kept.append(v)
    return kept[:EDGE_VALUES]


def edge_specs(taps: Taps, bases: list[tuple[str, Any, Any]], wanted: set[int]) -> list[dict[str, Any]]:
    """Inputs that meet each tapped comparison of ``wanted`` (those a live mutant moves) with a leaf on one side,
    on each base call: the leaf set to ``edge_values`` of what the other side took in that call. Every base call
    is run tapped, so the comparisons the recorded calls meet count as met."""
    out: list[dict[str, Any]] = []
    for name, case, arrays in bases:
        taps.values = {}
        taps.run(case, arrays, collect=True)
        for k, site in enumerate(taps.sites):
            leaf = site.get("leaf")
            if not leaf or k not in taps.values or k not in wanted:
                continue
            out += [{"base": name, "set": {leaf: v}, "kind": "edge", "edge": site["text"]}
                    for v in edge_values(taps.values[k], ll.get(case, arrays, leaf))]
    taps.values = {}
    return out
