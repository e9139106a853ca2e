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

from lmrbench.authoring.record import amplify
from lmrbench.authoring.record.amplify_plans import made_text
from lmrbench.authoring.record.bodycoverage import BodyModel, cover_greedy, pick_cases
from lmrbench.authoring.record.captured_calls import call_shape
from lmrbench.authoring.record.case_files import read_case
from lmrbench.authoring.record.case_probe import TargetProbe
from lmrbench.authoring.record.recorded_call import Amplification, RecordedCall
from lmrbench.runtime import lmrbench_leaves as ll

MAX_VALUES_KEPT = 4
"""Most distinct values of one parameter that selection keeps a call for."""


class CallValues:
    """The scalar arguments (and ``also``: text modes, attributes of ``self``) and the special values of calls,
    each read from the call's case file once."""

    def __init__(self, also: list[str] | None = None) -> None:
        self.also = list(also or [])
        self._scalars: dict[Path, dict[str, amplify.Scalar]] = {}
        self._specials: dict[Path, list[str]] = {}

    def scalars(self, call: RecordedCall) -> dict[str, amplify.Scalar]:
        if call.path not in self._scalars:
            self._scalars[call.path] = amplify.scalar_arguments(call.path, self.also)
        return self._scalars[call.path]

    def specials(self, call: RecordedCall) -> list[str]:
        if call.path not in self._specials:
            self._specials[call.path] = amplify.special_values(call.path)
        return self._specials[call.path]

    def text(self, call: RecordedCall) -> str:
        """A call by its scalar arguments, the attributes of ``self`` the body reads, and special values
        (``beta=0.1, reference_free=False``, ``self.beta=0.1, self.loss_type='sigmoid'``)."""
        parts = [f"{k}={amplify.value_text(v)}" for k, v in self.scalars(call).items()] + self.specials(call)
        return ", ".join(parts) or call_shape(call.path)


@dataclass
class Selection:
    """The kept calls of one goal function, and why."""

    kept: list[RecordedCall]
    reasons: dict[int, list[str]] = field(default_factory=dict)
    """Index into ``kept`` -> why it was kept."""
    dropped: list[RecordedCall] = field(default_factory=list)
    knife: list[RecordedCall] = field(default_factory=list)
    """Calls left out because a one-ulp change of a float input changes their result."""
    values: CallValues = field(default_factory=CallValues)
    """What the selection read of the calls' values (the summary names calls by them)."""


MIN_PER_MODE = 2
"""Kept calls for each value of a flag or a text mode (when the calls have that many)."""


def select(
    calls: list[RecordedCall],
    max_calls: int,
    model: BodyModel | None,
    shape: Callable[[RecordedCall], str],
    probe: TargetProbe | None,
    catch: bool = True,
) -> Selection:
    """The kept calls (in the order they happened, then the added cases) and why each was kept; without
    ``catch``, only ``pick_cases`` (coverage, call shape, the earliest) decides."""
    if not catch:
        kept = pick_cases(calls, max_calls, model, shape)
        return Selection(kept, {}, [c for c in calls if all(c is not k for k in kept)])
    values = CallValues(probe.also if probe else [])
    knife = [c for c in calls if probe and c.file in probe.knife]
    calls = [c for c in calls if all(c is not k for k in knife)]
    picked: dict[int, list[str]] = {}

    def keep(i: int, why: str) -> None:
        picked.setdefault(i, []).append(why)

    for i in cover_greedy(calls, max_calls, model) if model is not None else []:
        keep(i, "lines and branches")
    kills = [probe.kills.get(c.file, set()) for c in calls] if probe else [set() for _ in calls]
    caught: set[str] = set().union(*(kills[i] for i in picked)) if picked else set()
    wanted = set().union(*kills) if kills else set()
    while wanted - caught:
        best = max(range(len(calls)), key=lambda i: (len(kills[i] - caught), -i))
        keep(best, f"kills {len(kills[best] - caught)} mutant(s) the others miss")
        caught |= kills[best]
    for param in amplify.parameter_values([c.path for c in calls], values.also):
        have = {repr(values.scalars(calls[i]).get(param)) for i in picked}
        spread = _spread(calls, param, values)
        if spread is not None:  # a number over a whole run: its two ends are kept
            for i, end in zip(spread[:2], ("lowest", "highest"), strict=True):
                if repr(values.scalars(calls[i]).get(param)) not in have:
                    have.add(repr(values.scalars(calls[i]).get(param)))
                    keep(i, f"the {end} {param} of the run")
        for i in spread or range(len(calls)):
            c = calls[i]
            value = values.scalars(c).get(param)
            if param in values.scalars(c) and repr(value) not in have and len(have) < MAX_VALUES_KEPT:
                have.add(repr(value))
                keep(i, f"{param}={amplify.value_text(value)}")
    for param, vs in amplify.parameter_values([c.path for c in calls], values.also).items():
        if len(vs) < 2 or type(vs[0]) not in (bool, str):
            continue
        for value in vs:
            same = [i for i, c in enumerate(calls) if values.scalars(c).get(param) == value]
            for i in [i for i in same if i not in picked][:max(0, MIN_PER_MODE - sum(i in picked for i in same))]:
                keep(i, f"a second call with {param}={amplify.value_text(value)}")
    have_special = {s for i in picked for s in values.specials(calls[i])}
    for i, c in enumerate(calls):
        for s in values.specials(c):
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
    for call, made in probe.added() if probe else []:
        reasons[len(kept)] = [f"added: {made_text(made)}"]
        kept.append(call)
    dropped = [c for i, c in enumerate(calls) if i not in picked]
    return Selection(kept, reasons, dropped, knife, values)


def _spread(calls: list[RecordedCall], param: str, values: CallValues) -> list[int] | None:
    """When a number takes more values than selection keeps (a schedule's ``step`` over a whole run): the calls'
    indices, those holding its lowest, highest and middle values first; else None."""
    held = [(i, float(v)) for i, c in enumerate(calls)
            if isinstance(v := values.scalars(c).get(param), int | float) and not isinstance(v, bool)]
    if len({v for _, v in held}) <= MAX_VALUES_KEPT:
        return None
    ranked = [i for i, _ in sorted(held, key=lambda iv: iv[1])]
    n = len(ranked)
    first = list(dict.fromkeys(ranked[k] for k in (0, n - 1, n // 2, n // 4, 3 * n // 4)))
    return first + [i for i in range(len(calls)) if i not in first]


def unvaried(kept: list[RecordedCall], also: list[str] | None = None, probe: TargetProbe | None = None) -> list[str]:
    """Scalar parameters (and ``also``: text modes, attributes of ``self``) with one value over the kept cases
    (recorded, added by varying one parameter, the scan's, which vary a head count only with the arrays it
    sizes, and the search's that set one leaf and kill its pin: ``probe``), unless a pair's case varies it to
    effect: one whose result differs from the case with only the other parameter changed."""
    pinned = {m.digest: m.pinned for m in probe.mutants if m.pinned} if probe else {}

    def pins(made: Amplification) -> bool:  # a crop count cut with its rows kills the pin of the crop count
        return probe is not None and made.kind == "search" and len(made.settings) == 1 and \
            next(iter(made.settings)) in {pinned.get(d) for d in probe.kills.get(made.file, set())}

    single = [c.path for c in kept if c.amplified is None or c.amplified.kind in ("value", "all", "scan")
              or pins(c.amplified)]
    by_pairs = {n for c in kept if c.amplified is not None for n in c.amplified.effective}
    seen = amplify.parameter_values(single, also or []).items() if single else []
    once = [p for p, vs in seen if len(vs) == 1 and p not in by_pairs]
    # a leaf that some cases leave None and one sets (``clip_ratio_low=None`` given 0.1) is varied
    nones: set[str] = set()
    unset = [p for p in (probe.unset if probe else []) if p not in by_pairs]
    set_somewhere: set[str] = set()
    for path in single if once or unset else []:
        case = read_case(path)[0]
        nones |= {p for p in once if ll.node(case, p) is None}
        set_somewhere |= {p for p in unset if ll.node(case, p) not in (None, ll.MISSING)}
    # a setting every recorded call left None or lacked (``config.head_dim``) that no kept case sets
    return [p for p in once if p not in nones] + [p for p in unset if p not in set_somewhere]


def summary_lines(target: str, calls: list[RecordedCall], sel: Selection, probe: TargetProbe | None) -> list[str]:
    """What ``task record`` says about one goal function's cases: what was kept and dropped, what was added,
    which parameter no test varies, and what the kept cases kill per mutant kind."""
    out = [f"{target}: kept {len(sel.kept) - len(probe.amplified if probe else [])} of {len(calls)} distinct "
           "recorded call(s)"]
    for c in sel.knife:
        out.append(f"dropped the call ({sel.values.text(c)}): a one-ulp change of its float inputs changes its result "
                   "(a branch taken on exact float equality); record a call that takes the branch for a stable "
                   "reason")
    if sel.dropped:
        texts = Counter(sel.values.text(c) for c in sel.dropped)
        shown = "; ".join(f"({t})" + (f" x{n}" if n > 1 else "") for t, n in list(texts.items())[:5])
        more = f" and {len(texts) - 5} more" if len(texts) > 5 else ""
        out.append(f"dropped {len(sel.dropped)} call(s) that add no line, branch, mutant kill, parameter value "
                   f"or special value to the kept ones: {shown}{more}")
    if probe is None:
        return out
    values_ = amplify.parameter_values([c.path for c in calls], probe.also)
    by_param: dict[str, list[amplify.Scalar]] = {}
    for _, made in probe.added():
        if made.when:
            out.append(f"no recorded call combined {combination_text(made)}; added a case that does")
        elif made.kind == "value" and made.param in values_ and made.value is not None:
            by_param.setdefault(made.param, []).append(made.value)
        elif made.kind == "search":
            out.append(f"added a case the search found ({made_text(made)}): it kills a mutant no other case kills")
        elif made.kind == "scan":
            out.append(f"added a case no recorded call gives ({made_text(made)})")
        else:
            out.append(f"added a case with {made_text(made)}")
    for param, new in by_param.items():
        out.append(f"{amplify.recorded_text(param, values_[param])} in the recording; added {len(new)} case(s) "
                   f"with {param} "
                   f"{amplify.range_text(new)}")
    fixed = unvaried(sel.kept, probe.also, probe)
    out += [f"no test varies {note}" for note in probe.notes if note.split(":")[0] in fixed]
    out.append(kill_text(probe, sel))
    out += search_lines(target, probe)
    return out


def combination_text(made: Amplification) -> str:
    """``reference_free=True with label_smoothing=0.2``: what an added combination case sets."""
    flags = ", ".join(f"{k}={amplify.value_text(v)}" for k, v in made.when.items())
    return f"{flags} with {made.param}={amplify.value_text(made.value)}"


def kept_kills(probe: TargetProbe, sel: Selection) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """Per kind, (mutants the kept cases kill, mutants some case kills); and the digests of the mutants no case
    kills that are equivalent: on every recorded input when no search ran, else shown so by the search (random
    inputs of the recorded shapes included). The search's live mutants are in neither."""
    every = set().union(*probe.kills.values()) if probe.kills else set()
    kept = set().union(*(probe.kills.get(c.file, set()) for c in sel.kept)) if sel.kept else set()
    counts: dict[str, list[int]] = {}
    equivalent = []
    for mu in probe.mutants:
        if mu.digest in probe.untried:
            continue
        if mu.digest not in every:
            if not probe.search.searched or mu.digest in probe.search.equivalent:
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
        where = "shown equivalent (no input separates it, random ones included)" if probe.search.searched \
            else "equivalent on every recorded input"
        named = "; ".join(f"{m.kind}: {m.description}" for m in probe.mutants if m.digest in equivalent)
        text += f"; {len(equivalent)} {where} ({named})"
    if probe.search.live:
        text += f"; {len(probe.search.live)} live"
    if probe.untried:
        text += f"; {len(probe.untried)} not tried (time budget)"
    return text


def search_lines(target: str, probe: TargetProbe) -> list[str]:
    """What the search for killing inputs did (``search: 4 mutant(s) no case killed; 3 killed by a new case, 1
    live, 0 shown equivalent; 57 input(s) tried``) and a line per live mutant with what was tried."""
    found = probe.search
    if not found.searched:
        return []
    out = [f"search: {found.searched} mutant(s) no case killed; {len(found.killed)} killed by a new case, "
           f"{len(found.live)} live, {len(found.equivalent)} shown equivalent; {found.inputs} input(s) tried"
           + (f" ({found.tried_text()})" if found.live else "")]
    for m in probe.mutants:
        if m.digest in found.live:
            edge = " (only knife-edge inputs separate it)" if m.digest in found.edges else ""
            outside = found.outside.get(m.digest)
            unmet = found.unmet.get(m.digest)
            replaced = found.replaced.get(m.digest)
            why = (f"only {outside} separates it, which no recorded call passes (no case made)" if outside
                   else f"no input tried makes both sides of {unmet!r} equal" if unmet
                   else f"it replaces {replaced}, which nothing else in the recorded program holds" if replaced
                   else "no input tried kills it")
            out.append(f"live: {target}: {m.kind} ({m.description}){edge}: {why}")
    return out
