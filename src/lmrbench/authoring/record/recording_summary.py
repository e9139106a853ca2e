"""What a recording says about its cases, in three places: the lines ``task record`` prints (and the app logs),
the test file's header, and the fields of index.json that ``validate`` and ``task check`` read."""

from __future__ import annotations

from lmrbench.authoring.mutants.mutant_hints import kill_hint
from lmrbench.authoring.record import amplify
from lmrbench.authoring.record.amplify_plans import made_text
from lmrbench.authoring.record.case_probe import TargetProbe
from lmrbench.authoring.record.case_selection import Selection, combination_text, kept_kills, summary_lines, unvaried
from lmrbench.authoring.record.recorded_call import Amplification, RecordedCall
from lmrbench.authoring.record.recorded_tests import CaseFacts
from lmrbench.authoring.record.search_plans import SearchReport
from lmrbench.schemas.recording import AmplifiedParameter, MutantCatch, MutantSearch, SearchSummary

WEAK_KINDS = ("pin_parameter", "drop_mask", "drop_branch", "swap_args", "detach", "force_branch", "drop_guard",
              "drop_offset", "default_path", "pin_nested", "compare", "drop_reduction", "drop_copy", "drop_power",
              "drop_wrap", "sign_zero", "rebind", "drop_move", "strict_get",
              "drop_none_check")
"""Mutant kinds shaped like real mistakes: one that stays equivalent after amplification makes the task weak."""


def weak_lines(target: str, probe: TargetProbe, equivalent: list[str]) -> list[str]:
    """``weak: ...`` lines for the equivalent mutants of mistake kinds that the search did not settle, with what
    would kill each (one it showed equivalent is no weakness; one it left live has its ``live:`` line)."""
    settled = {*probe.search.equivalent, *probe.search.live}
    return [f"weak: {target}: {m.kind} equivalent on every recorded input ({m.description}); it would be "
            f"killed by {kill_hint(m.kind, m.description)}: record with a command that makes such a call"
            for m in probe.mutants if m.digest in equivalent and m.digest not in settled and m.kind in WEAK_KINDS]


def describe_selection(
    pool: dict[str, list[RecordedCall]],
    selections: dict[str, Selection],
    probes: dict[str, TargetProbe],
    chosen: dict[str, list[RecordedCall]],
) -> tuple[list[str], list[str], CaseFacts]:
    """(summary lines, test-file notes, index.json fields) of the chosen cases."""
    lines: list[str] = []
    notes: list[str] = []
    amplified: list[AmplifiedParameter] = []
    catches: list[MutantCatch] = []
    searches: list[SearchSummary] = []
    never: list[str] = []
    several = len(pool) > 1
    for target, calls in pool.items():
        sel, probe = selections[target], probes.get(target)
        lines += summary_lines(target, calls, sel, probe)
        qual = target.partition("::")[2]
        fixed = unvaried(chosen[target], probe.also if probe else [], probe)
        never += [f"{qual}: {p}" if several else p for p in fixed]
        if probe is None:
            continue
        first = amplify.parameter_values([c.path for c in calls], probe.also)
        by_param: dict[str, list[tuple[RecordedCall, Amplification]]] = {}
        for call, made in probe.added():
            if made.when:
                notes.append(f"a case with {combination_text(made)}, which no recorded call combined")
            elif made.kind == "value" and made.param in first and made.value is not None:
                by_param.setdefault(made.param, []).append((call, made))
            elif made.kind == "search":
                notes.append(f"a case the search found ({made_text(made)}), which kills a mutant no other case kills")
            elif made.kind == "scan":
                notes.append(f"a case no recorded call gives ({made_text(made)})")
            else:
                notes.append(f"a case with {made_text(made)}")
        for param, made_list in by_param.items():
            vals = [amplify.value_text(m.value) for _, m in made_list]
            files = [f"case_{chosen[target].index(c) + 1}.npz" for c, _ in made_list]
            was = amplify.value_text(first[param][0])
            amplified.append(AmplifiedParameter(target=target, param=param, recorded=was, values=vals, cases=files))
            notes.append(f"{amplify.recorded_text(param, first[param])} in the recording; {len(vals)} case(s) with "
                         f"{param} "
                         f"{amplify.range_text([m.value for _, m in made_list if m.value is not None])}")
        kept_ids = set().union(*(probe.kills.get(c.file, set()) for c in sel.kept)) if sel.kept else set()
        _, equivalent = kept_kills(probe, sel)
        live = set(probe.search.live)
        catches += [MutantCatch(target=target, digest=m.digest, kind=m.kind, description=m.description,
                                pinned=m.pinned, killed=m.digest in kept_ids, equivalent=m.digest in equivalent
                                and m.digest not in probe.untried,
                                hint=kill_hint(m.kind, m.description) if (m.digest in equivalent or m.digest in live)
                                and m.kind in WEAK_KINDS else "",
                                search=_searched(m.digest, probe.search))
                    for m in probe.mutants]
        if probe.search.searched:
            found = probe.search
            searches.append(SearchSummary(target=target, searched=found.searched, killed=len(found.killed),
                                          live=len(found.live), equivalent=len(found.equivalent),
                                          inputs=found.inputs))
        lines += weak_lines(target, probe, equivalent)
    lines += [f"no test varies {p}" for p in never if not any(ln.startswith(f"no test varies {p}") for ln in lines)]
    facts = CaseFacts(selection=lines, amplified=amplified, unvaried=never, pins={t: p.pins for t, p in probes.items()},
                      grad=[t for t, p in probes.items() if p.grad], mutants=catches, search=searches)
    return lines, notes, facts


def _searched(digest: str, found: SearchReport) -> MutantSearch | None:
    """What the search found for one mutant, or None when it was not searched (the kept cases kill it)."""
    tried = list(found.tried)
    if digest in found.killed:
        return MutantSearch(outcome="killed", case=found.killed[digest], tried=tried, inputs=found.inputs)
    for outcome, digests in (("equivalent", found.equivalent), ("live", found.live)):
        if digest in digests:
            return MutantSearch(outcome=outcome, tried=tried, inputs=found.inputs,  # type: ignore[arg-type]
                                outside=found.outside.get(digest, ""), tied=list(found.tied),
                                knife=outcome == "live" and digest in found.edges,
                                unmet=found.unmet.get(digest, ""), replaced=found.replaced.get(digest, ""))
    return None
