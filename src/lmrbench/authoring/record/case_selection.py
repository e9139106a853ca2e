"""Which recorded calls become test cases: a small set chosen by what the calls catch, not only by coverage.

From the distinct calls of a goal function: first those that cover most of the golden body
(``bodycoverage.pick_cases``, up to ``max_calls``), then, greedily, calls that kill mutants no kept call kills
(``case_probe``), then a call for each value of a scalar parameter not yet kept (up to four values), then a
call for each special value not yet kept (masked targets, zeros, an empty batch); then the earliest others up
to ``max_calls``. Cases the recording added by varying a parameter are all kept. Every kept call has its
reasons; every dropped one is named.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lmrbench.authoring.record import amplify
from lmrbench.authoring.record.amplify_plans import made_text
from lmrbench.authoring.record.bodycoverage import BodyModel, cover_greedy, pick_cases
from lmrbench.authoring.record.captured_calls import call_shape
from lmrbench.authoring.record.case_probe import TargetProbe

MAX_VALUES_KEPT = 4
"""Most distinct values of one parameter that selection keeps a call for."""


@dataclass
class Selection:
    """The kept calls of one goal function, and why."""

    kept: list[dict[str, Any]]
    reasons: dict[int, list[str]] = field(default_factory=dict)
    """Index into ``kept`` -> why it was kept."""
    dropped: list[dict[str, Any]] = field(default_factory=list)
    knife: list[dict[str, Any]] = field(default_factory=list)
    """Calls left out because a one-ulp change of a float input changes their result."""


MIN_PER_MODE = 2
"""Kept calls for each value of a flag or a text mode (when the calls have that many)."""


def _scalars(line: dict[str, Any], also: list[str] | None = None) -> dict[str, amplify.Scalar]:
    if "scalars" not in line:
        line["scalars"] = amplify.scalar_arguments(line["path"], also or [])
    return line["scalars"]  # type: ignore[no-any-return]


def _specials(line: dict[str, Any]) -> list[str]:
    if "specials" not in line:
        line["specials"] = amplify.special_values(line["path"])
    return line["specials"]  # type: ignore[no-any-return]


def call_text(line: dict[str, Any]) -> str:
    """A call by its scalar arguments, the attributes of ``self`` the body reads, and special values
    (``beta=0.1, reference_free=False``, ``self.beta=0.1, self.loss_type='sigmoid'``)."""
    parts = [f"{k}={amplify.value_text(v)}" for k, v in _scalars(line).items()] + _specials(line)
    return ", ".join(parts) or call_shape(Path(line["path"]))


def select(
    calls: list[dict[str, Any]],
    max_calls: int,
    model: BodyModel | None,
    shape: Callable[[dict[str, Any]], str],
    probe: TargetProbe | None,
    catch: bool = True,
) -> Selection:
    """The kept calls (in the order they happened, then the added cases) and why each was kept; without
    ``catch``, only ``pick_cases`` (coverage, call shape, the earliest) decides."""
    if not catch:
        kept = pick_cases(calls, max_calls, model, shape)
        return Selection(kept, {}, [c for c in calls if all(c is not k for k in kept)])
    for c in calls:
        _scalars(c, probe.also if probe else [])
    knife = [c for c in calls if probe and c["file"] in probe.knife]
    calls = [c for c in calls if all(c is not k for k in knife)]
    picked: dict[int, list[str]] = {}

    def keep(i: int, why: str) -> None:
        picked.setdefault(i, []).append(why)

    for i in cover_greedy(calls, max_calls, model) if model is not None else []:
        keep(i, "lines and branches")
    kills = [probe.kills.get(c["file"], set()) for c in calls] if probe else [set() for _ in calls]
    caught: set[str] = set().union(*(kills[i] for i in picked)) if picked else set()
    wanted = set().union(*kills) if kills else set()
    while wanted - caught:
        best = max(range(len(calls)), key=lambda i: (len(kills[i] - caught), -i))
        keep(best, f"kills {len(kills[best] - caught)} mutant(s) the others miss")
        caught |= kills[best]
    for param in amplify.parameter_values([Path(c["path"]) for c in calls], probe.also if probe else []):
        have = {repr(_scalars(calls[i]).get(param)) for i in picked}
        for i, c in enumerate(calls):
            value = _scalars(c).get(param)
            if param in _scalars(c) and repr(value) not in have and len(have) < MAX_VALUES_KEPT:
                have.add(repr(value))
                keep(i, f"{param}={amplify.value_text(value)}")  # type: ignore[arg-type]
    for param, vs in amplify.parameter_values([Path(c["path"]) for c in calls], probe.also if probe else []).items():
        if len(vs) < 2 or type(vs[0]) not in (bool, str):
            continue
        for value in vs:
            same = [i for i, c in enumerate(calls) if _scalars(c).get(param) == value]
            for i in [i for i in same if i not in picked][:max(0, MIN_PER_MODE - sum(i in picked for i in same))]:
                keep(i, f"a second call with {param}={amplify.value_text(value)}")
    have_special = {s for i in picked for s in _specials(calls[i])}
    for i, c in enumerate(calls):
        for s in _specials(c):
            if s not in have_special:
                have_special.add(s)
                keep(i, s)
    for c in pick_cases(calls, max_calls, None, shape):
        i = next(k for k, x in enumerate(calls) if x is c)
        if len(picked) >= max_calls:
            break
        if i not in picked:
            keep(i, "another call shape" if shape(c) not in {shape(calls[k]) for k in picked} else "filling up")
    order = sorted(picked)
    kept = [calls[i] for i in order]
    reasons = {n: picked[i] for n, i in enumerate(order)}
    for made in probe.amplified if probe else []:
        reasons[len(kept)] = [f"added: {made_text(made['amplified'])}"]
        kept.append(made)
    dropped = [c for i, c in enumerate(calls) if i not in picked]
    return Selection(kept, reasons, dropped, knife)


def unvaried(kept: list[dict[str, Any]], also: list[str] | None = None) -> list[str]:
    """Scalar parameters (and ``also``: text modes, attributes of ``self``) with one value over the kept cases
    (recorded, and added by varying one parameter), unless a pair's case varies it to effect: one whose result
    differs from the case with only the other parameter changed."""
    single = [Path(c["path"]) for c in kept if (c.get("amplified") or {}).get("kind", "value") in ("value", "all")]
    by_pairs = {n for c in kept for n in (c.get("amplified") or {}).get("effective", [])}
    seen = amplify.parameter_values(single, also or []).items() if single else []
    return [p for p, vs in seen if len(vs) == 1 and p not in by_pairs]


def summary_lines(target: str, calls: list[dict[str, Any]], sel: Selection, probe: TargetProbe | None) -> list[str]:
    """What ``task record`` says about one goal function's cases: what was kept and dropped, what was added,
    which parameter no test varies, and what the kept cases kill per mutant kind."""
    out = [f"{target}: kept {len(sel.kept) - len(probe.amplified if probe else [])} of {len(calls)} distinct "
           "recorded call(s)"]
    for c in sel.knife:
        out.append(f"dropped the call ({call_text(c)}): a one-ulp change of its float inputs changes its result "
                   "(a branch taken on exact float equality); record a call that takes the branch for a stable "
                   "reason")
    if sel.dropped:
        texts = Counter(call_text(c) for c in sel.dropped)
        shown = "; ".join(f"({t})" + (f" x{n}" if n > 1 else "") for t, n in list(texts.items())[:5])
        more = f" and {len(texts) - 5} more" if len(texts) > 5 else ""
        out.append(f"dropped {len(sel.dropped)} call(s) that add no line, branch, mutant kill, parameter value "
                   f"or special value to the kept ones: {shown}{more}")
    if probe is None:
        return out
    values_ = amplify.parameter_values([Path(c["path"]) for c in calls], probe.also)
    by_param: dict[str, list[amplify.Scalar]] = {}
    for made in probe.amplified:
        info = made["amplified"]
        if info.get("when"):
            out.append(f"no recorded call combined {combination_text(info)}; added a case that does")
        elif info.get("kind", "value") == "value" and info["param"] in values_:
            by_param.setdefault(info["param"], []).append(info["value"])
        else:
            out.append(f"added a case with {made_text(info)}")
    for param, new in by_param.items():
        out.append(f"{amplify.recorded_text(param, values_[param])} in the recording; added {len(new)} case(s) "
                   f"with {param} "
                   f"{amplify.range_text(new)}")
    fixed = unvaried(sel.kept, probe.also)
    out += [f"no test varies {note}" for note in probe.notes if note.split(":")[0] in fixed]
    out.append(kill_text(probe, sel))
    return out


def combination_text(info: dict[str, Any]) -> str:
    """``reference_free=True with label_smoothing=0.2``: what an added combination case sets."""
    flags = ", ".join(f"{k}={amplify.value_text(v)}" for k, v in info["when"].items())
    return f"{flags} with {info['param']}={amplify.value_text(info['value'])}"


def kept_kills(probe: TargetProbe, sel: Selection) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """Per kind, (mutants the kept cases kill, mutants some case kills); and the digests of the mutants no case
    kills (equivalent on every recorded input, or not tried)."""
    every = set().union(*probe.kills.values()) if probe.kills else set()
    kept = set().union(*(probe.kills.get(c["file"], set()) for c in sel.kept)) if sel.kept else set()
    counts: dict[str, list[int]] = {}
    equivalent = []
    for mu in probe.mutants:
        if mu.digest in probe.untried:
            continue
        if mu.digest not in every:
            equivalent.append(mu.digest)
            continue
        c = counts.setdefault(mu.kind, [0, 0])
        c[0] += mu.digest in kept
        c[1] += 1
    return {k: (v[0], v[1]) for k, v in counts.items()}, equivalent


def kill_text(probe: TargetProbe, sel: Selection) -> str:
    """``mutants: the kept cases kill 40/40 (pin_parameter 2/2, ...); 3 equivalent on every recorded input``."""
    per_kind, equivalent = kept_kills(probe, sel)
    killed = sum(k for k, _ in per_kind.values())
    total = sum(t for _, t in per_kind.values())
    kinds = ", ".join(f"{kind} {k}/{t}" for kind, (k, t) in sorted(per_kind.items()))
    text = f"mutants: the kept cases kill {killed}/{total} ({kinds})"
    if equivalent:
        named = "; ".join(f"{m.kind}: {m.description}" for m in probe.mutants if m.digest in equivalent)
        text += f"; {len(equivalent)} equivalent on every recorded input ({named})"
    if probe.untried:
        text += f"; {len(probe.untried)} not tried (time budget)"
    return text
