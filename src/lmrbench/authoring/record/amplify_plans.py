"""The cases to add after a recording, as plans for ``runtime/lmrbench_probe.py``: what real drivers leave out.

Each plan varies one parameter (or an attribute of ``self`` the method reads) and holds variants, each a change
to a recorded call: ``set`` (new values of parameters), ``fill`` (every entry of the arrays holding an int
parameter set to its value: all targets ignored), ``noise`` (the entries a mask leaves out filled with noise,
so that a dropped mask shows), ``keep`` (a case even when the golden result does not change). The probe makes
each variant on the first recorded call it applies to and keeps those that change a result (or ``keep``).

- a text parameter: a case for each literal the body compares it with that no call used;
- a number or flag with one value in every call: the values of ``amplify.varied_values``; an int that an array
  holds (``targets`` holds ``ignore_index``) moves those entries with it, and gets a case where every entry
  equals it; an int also takes a value inside the range of the array that holds it or that the body combines it
  with (``lengths < min_length``);
- pairs of parameters the body combines (``body_reads``): both varied at once, within ``MAX_PAIRS``;
- a flag never combined with another parameter's other value (``amplify.missing_pairs``);
- a mask argument: its masked-out entries filled with noise.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from lmrbench.authoring.record import amplify
from lmrbench.authoring.record.body_reads import BodyReads
from lmrbench.authoring.record.body_values import value_of
from lmrbench.authoring.record.recorded_call import Amplification, Scalar

MAX_PAIRS = 3
"""Most pairs of combined parameters varied together."""
MAX_NOISE = 4
"""Most noise cases per mask (as recorded, then with each flag or mode value)."""
PAIR_VARIANTS = 2
"""Most cases tried per pair (both varied the same way, then the second the other way; ints also swapped)."""


def extra_names(paths: list[Path], reads: BodyReads) -> list[str]:
    """Names ``amplify.scalar_arguments`` also reads: text parameters the body compares with literals and the
    access paths below ``self`` or a parameter that the body and its helpers read."""
    return list(dict.fromkeys([*reads.literals, *reads.paths]))


def in_domain(param: str, values: list[amplify.Scalar], recorded: list[amplify.Scalar],
              reads: BodyReads) -> list[amplify.Scalar]:
    """``values`` without those outside the docstring's bound (``growth_interval`` (>= 1)) and outside what the
    recorded ints show: an int recorded non-negative (a step, a count) stays non-negative, and a size recorded at
    least 1 (``n_bins``, ``reads.sizes``) stays at least 1 unless the body compares the leaf with zero
    (``top_k > 0``: then 0, its off switch, is tried too)."""
    documented = reads.lows.get(re.findall(r"[A-Za-z_]\w*", param)[-1])  # (``growth_interval`` (>= 1))
    if documented is not None:
        bound, strict = documented
        values = [x for x in values if not isinstance(x, int | float) or x > bound or x == bound and not strict]
    ints = [r for r in recorded if type(r) is int]
    if type(recorded[0]) is not int or not ints:
        return values
    if param in reads.signed:  # a switch at zero is tried at zero, never below it: a count of epochs is no sign
        low = 0 if min(ints) >= 0 else None
    else:
        low = 1 if min(ints) >= 1 and param in reads.sizes else 0 if min(ints) >= 0 else None
    return values if low is None else [x for x in values if type(x) is not int or x >= low]


def _values_of(param: str, recorded: list[amplify.Scalar], reads: BodyReads,
               inside: list[int] | None = None) -> list[amplify.Scalar]:
    """The values to try: the literals of a text mode; ``amplify.varied_values`` else, kept ``in_domain``."""
    first = recorded[0]
    if type(first) is str:
        return [x for x in reads.literals.get(param, []) if x not in recorded]
    out = amplify.varied_values(first, inside or [])
    out = in_domain(param, out, recorded, reads)
    if type(first) is float and first > 0 and param in reads.signed:
        out = [*out[:-1], -first]  # compared with zero (``alpha >= 0``): the other side of the branch too
    if type(first) is int and first > 1 and param in reads.signed:  # a switch (``n <= 0``): off, and its edge
        out = [*out, *(x for x in (1, 0) if x not in out and x not in recorded)]
    return out


def _pair_variants(p: str, q: str, pv: list[amplify.Scalar], qv: list[amplify.Scalar],
                   first: dict[str, amplify.Scalar], recorded: set[tuple[Any, Any]]) -> list[dict[str, Any]]:
    """Both varied at once: the first new values of each, then one of them the other way (at most
    ``PAIR_VARIANTS``, none a recorded call already has); two ints also swapped."""
    combos = [(a, b) for a, b in [(pv[0], qv[0]), *((pv[0], y) for y in qv[1:2]), *((x, qv[0]) for x in pv[1:2]),
                                  *((x, y) for x in pv[1:2] for y in qv[1:2])] if (a, b) not in recorded]
    combos = list(dict.fromkeys(combos))[:PAIR_VARIANTS]
    if type(first[p]) is int and type(first[q]) is int and first[p] != first[q] \
            and (first[q], first[p]) not in recorded:
        combos.append((first[q], first[p]))  # the two values swapped: max(a, b) against max(b, a)
    return [{"set": {p: a, q: b}, "kind": "pair"} for a, b in combos]


def varied_leaves(paths: list[Path], reads: BodyReads) -> tuple[dict[str, list[amplify.Scalar]], set[str]]:
    """The recorded values of the leaves a plan may vary, and those of them tied to the arrays' shapes
    (``amplify.tied_to_shapes``, among the sizes the body builds with: a head count, or a size that only happens
    to equal a dimension in every call). A tied leaf is varied alone only to values other than 1 (1 would broadcast
    against the recorded arrays), and a value whose golden result changes shape makes no case (``tied``). An
    attribute that the class's ``__init__`` sizes its arrays by (``reads.built``) is no leaf to vary."""
    seen = {p: v for p, v in amplify.parameter_values(paths, extra_names(paths, reads)).items() if p not in reads.built}
    tied = amplify.tied_to_shapes(paths, [p for p, vs in seen.items() if type(vs[0]) is int and p in reads.sizes])
    return seen, tied


UNSET_TRIES: tuple[amplify.Scalar, ...] = (2, 0.5)
"""Values tried for a setting recorded absent or None whose kind nothing in the body tells: an int (that a count
or a size takes too) and a float below 1."""


def unset_settings(reads: BodyReads, seen: dict[str, list[amplify.Scalar]]) -> dict[str, list[amplify.Scalar]]:
    """Settings below ``self`` or an argument that every recorded call left None or lacked, read where set: tested
    against None or for truth, read with ``.get``, or falling back to another value -> the values to try: half
    and twice what the fallback gives in the recording (``head_dim or hidden // heads`` with 64 and 4: 8 and
    32), else ``UNSET_TRIES``."""
    out: dict[str, list[amplify.Scalar]] = {}
    gets = [p for p, d in reads.gets.items() if d is None]
    firsts = {p: vs[0] for p, vs in seen.items()}
    for path in dict.fromkeys([*reads.fallbacks, *reads.nones, *reads.tested, *gets]):
        if path in seen or "." not in path and "[" not in path:
            continue
        found = [v for v in (value_of(t, firsts) for t in reads.fallbacks.get(path, [])) if v]
        w = found[0] if found else None
        if type(w) is int:
            out[path] = [x for x in (w // 2, 2 * w) if x >= 1]
        elif type(w) is float:
            out[path] = [w / 2, 2 * w]
        else:
            out[path] = list(UNSET_TRIES)
    return out


def probe_plans(paths: list[Path], reads: BodyReads, params: list[str]) -> list[dict[str, Any]]:
    """The probe's plans for the recorded calls ``paths`` of a function whose body reads as ``reads``
    (``params``: the function's parameters, without ``self``)."""
    seen, tied = varied_leaves(paths, reads)
    calls = [amplify.scalar_arguments(path, extra_names(paths, reads)) for path in paths]
    plans: list[dict[str, Any]] = []
    for p, vs in seen.items():
        if type(vs[0]) is str:
            lits = _values_of(p, vs, reads)
            if lits:
                plans.append({"param": p, "variants": [{"set": {p: x}} for x in lits]})
            continue
        if len(vs) != 1:
            continue
        remap = amplify.holders(paths, p) if type(vs[0]) is int else []
        compared = [b if a == p else a for a, b in reads.pairs if p in (a, b)]
        arrays = remap or [q for q in compared if q in params and q not in seen]
        inside = amplify.inside_values(paths, arrays, p) if type(vs[0]) is int else []
        values = [x for x in _values_of(p, vs, reads, inside) if p not in tied or x != 1]
        variants: list[dict[str, Any]] = [{"set": {p: x}} for x in values]
        if remap:
            variants.append({"fill": remap, "kind": "all", "keep": True})
        plans.append({"param": p, "variants": variants, "remap": remap,  # a tied leaf the scan cuts with its arrays
                      **({"tied": True, "note": False} if p in tied else {})})
    plans += [{"param": p, "variants": [{"set": {p: x}} for x in values], "note": False, "unset": True}
              for p, values in unset_settings(reads, seen).items()]
    first = {p: vs[0] for p, vs in seen.items()}
    pairs = [(p, q) for p, q in reads.pairs if p in seen and q in seen and p not in tied and q not in tied]
    missing = amplify.missing_pairs(paths)
    for p, q in pairs[:MAX_PAIRS]:
        pv, qv = _values_of(p, seen[p], reads), _values_of(q, seen[q], reads)
        had = {(c.get(p), c.get(q)) for c in calls} | {(dict(w, **{o: v}).get(p), dict(w, **{o: v}).get(q))
                                                        for o, v, w in missing}  # made below
        variants = [v for v in _pair_variants(p, q, pv, qv, first, had)  # a swap keeps each in its domain too
                    if all(in_domain(k, [x], seen[k], reads) for k, x in v["set"].items())]
        if variants:
            plans.append({"param": p, "variants": variants, "note": False})
    plans += [{"param": q, "variants": [{"set": {q: v}}], "when": when, "note": False} for q, v, when in missing]
    modes = [{m: v} for m, vs in seen.items() if type(vs[0]) in (bool, str)
             for v in dict.fromkeys([*vs, *_values_of(m, vs, reads)])]
    for name in reads.masks:
        if name in params and name not in seen and name not in tied:
            plans.append({"param": name, "variants": _noise({"mask": name}, modes), "note": False})
    for p in seen:
        for holder in amplify.holders(paths, p) if type(first[p]) is int else []:
            plans.append({"param": p, "variants": _noise({"where": holder, "equals": p}, modes), "note": False,
                          "remap": []})
    return plans


def _noise(noise: dict[str, str], modes: list[dict[str, amplify.Scalar]]) -> list[dict[str, Any]]:
    """Noise in the masked-out entries, as recorded and under each value of each flag or mode (a mask dropped
    in the ``sum`` branch shows only there), within ``MAX_NOISE``."""
    return [{"noise": noise, "kind": "noise", "keep": True, **({"set": m} if m else {})}
            for m in [{}, *modes][:MAX_NOISE]]


def made_text(made: Amplification) -> str:
    """What an added case changed: ``beta=0.2, label_smoothing=0.2``, ``every targets entry = ignore_index``,
    ``noise where attention_mask leaves entries out``."""
    if made.kind in ("search", "scan"):
        return made.param
    if made.kind == "all":
        return f"every {', '.join(made.fill)} entry = {made.param}"
    if made.kind == "noise":
        noise = made.noise
        where = noise.get("mask") or f"{noise.get('where')} == {noise.get('equals')}"
        also = "".join(f", {k}={amplify.value_text(v)}" for k, v in made.settings.items())
        return (f"noise where {where} leaves entries out" if "mask" in noise else f"noise where {where}") + also
    sets: dict[str, Scalar | None] = {**made.settings} or {made.param: made.value}
    when = "".join(f" with {k}={amplify.value_text(v)}" for k, v in made.when.items())
    return ", ".join(f"{k}={amplify.value_text(v)}" for k, v in sets.items()) + when
