"""What a recording says about its cases, in three places: the lines ``task record`` prints (and the app logs),
the test file's header, and the fields of index.json that ``validate`` and ``tasks check`` read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lmrbench.authoring import amplify
from lmrbench.authoring.case_probe import TargetProbe
from lmrbench.authoring.case_selection import Selection, combination_text, kept_kills, summary_lines
from lmrbench.schemas.recording import AmplifiedParameter, MutantCatch


def unvaried(kept: list[dict[str, Any]]) -> list[str]:
    """Scalar parameters with one value over the kept cases (recorded and added)."""
    paths = [Path(c["path"]) for c in kept]
    return [p for p, vs in amplify.parameter_values(paths).items() if len(vs) == 1] if len(paths) else []


def describe_selection(
    pool: dict[str, list[dict[str, Any]]],
    selections: dict[str, Selection],
    probes: dict[str, TargetProbe],
    chosen: dict[str, list[dict[str, Any]]],
) -> tuple[list[str], list[str], dict[str, Any]]:
    """(summary lines, test-file notes, index.json fields) of the chosen cases."""
    lines: list[str] = []
    notes: list[str] = []
    amplified: list[AmplifiedParameter] = []
    catches: list[MutantCatch] = []
    never: list[str] = []
    several = len(pool) > 1
    for target, calls in pool.items():
        sel, probe = selections[target], probes.get(target)
        lines += summary_lines(target, calls, sel, probe)
        qual = target.partition("::")[2]
        never += [f"{qual}: {p}" if several else p for p in unvaried(chosen[target])]
        if probe is None:
            continue
        by_param: dict[str, list[dict[str, Any]]] = {}
        for made in probe.amplified:
            if made["amplified"].get("when"):
                notes.append(f"a case with {combination_text(made['amplified'])}, which no recorded call combined")
            else:
                by_param.setdefault(made["amplified"]["param"], []).append(made)
        first = amplify.parameter_values([Path(c["path"]) for c in calls])
        for param, made_list in by_param.items():
            vals = [amplify.value_text(m["amplified"]["value"]) for m in made_list]
            files = [f"case_{chosen[target].index(m) + 1}.npz" for m in made_list]
            was = amplify.value_text(first[param][0])
            amplified.append(AmplifiedParameter(target=target, param=param, recorded=was, values=vals, cases=files))
            notes.append(f"{param} was always {was} in the recording; {len(vals)} case(s) with {param} "
                         f"{amplify.range_text([m['amplified']['value'] for m in made_list])}")
        kept_ids = set().union(*(probe.kills.get(c["file"], set()) for c in sel.kept)) if sel.kept else set()
        _, equivalent = kept_kills(probe, sel)
        catches += [MutantCatch(target=target, digest=m.digest, kind=m.kind, description=m.description,
                                killed=m.digest in kept_ids, equivalent=m.digest in equivalent
                                and m.digest not in probe.untried)
                    for m in probe.mutants]
    index: dict[str, Any] = {
        "selection": lines,
        "amplified": amplified,
        "unvaried": never,
        "pins": {t: p.pins for t, p in probes.items()},
        "grad": [t for t, p in probes.items() if p.grad],
        "mutants": catches,
    }
    lines += [f"no test varies {p}" for p in never if not any(ln.startswith(f"no test varies {p}") for ln in lines)]
    return lines, notes, index
