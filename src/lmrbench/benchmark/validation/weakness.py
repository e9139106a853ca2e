"""Weak tests: an implementation whose tests pass the golden code and fail the stub, but let mutants live.

Such an implementation is valid but weak (kept apart from valid): its tests kill fewer than
``DEFAULT_MIN_KILL_RATE`` of the mutants of the golden body, or let a mutant of a mistake kind live (one that
validation ran and the tests let pass, or one the recording's search left live). Each surviving mutant is named
(``M3 flip_sign``) and carries the diff of its change, for the table, the JSON and the app; each live mistake is
named with the input that would kill it.

The default was measured (docs/checks.md): the bundled examples' recorded tests kill 100% of their mutants,
a weak recorded fixture (a test that checks only the shape of the result) 0-25%, and the hand-written fixture
tests of the validation suite 50% (one of two behaviours checked) to 100%. 0.75 separates them.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lmrbench import pyparse
from lmrbench.schemas.recording import MutantCatch, tried_text
from lmrbench.schemas.validation import ImplValidation, MutantResult

if TYPE_CHECKING:
    from lmrbench.schemas.testrun import TestReport

DEFAULT_MIN_KILL_RATE = 0.75
"""Below this share of killed mutants an implementation is valid but weak."""
_DIFF_LINES = 12


def mutant_name(number: int, kind: str) -> str:
    """The name a mutant is reported by: its number in the run and its kind (``M3 flip_sign``)."""
    return f"M{number} {kind}"


def mutant_diff(golden: str, mutated: str, file: str) -> str:
    """The mutant's change as a short unified diff of the goal file (one line of context)."""
    lines = list(difflib.unified_diff(golden.splitlines(), mutated.splitlines(), f"a/{file}", f"b/{file}",
                                      n=1, lineterm=""))
    if len(lines) > _DIFF_LINES:
        lines = [*lines[:_DIFF_LINES], f"... ({len(lines) - _DIFF_LINES} more diff lines)"]
    return "\n".join(lines)


def survivors(mutants: list[MutantResult]) -> list[MutantResult]:
    """The mutants the tests let pass (infrastructure errors and equivalent mutants are not survivors)."""
    from lmrbench.schemas.testrun import TestStatus

    return [m for m in mutants if not m.killed and not m.equivalent and m.status is not TestStatus.INFRA_ERROR]


def pinned_parameter(m: MutantCatch | MutantResult) -> str:
    """The parameter a ``pin_parameter`` mutant pins: its ``pinned`` field, or, in a file written before that
    field, the name its description gives (``pin beta to 0.1 (its default)``)."""
    return m.pinned or m.description.split("pin ", 1)[-1].split(" ", 1)[0]


def _search_text(catch: MutantCatch | None) -> str:
    """What the recording's search tried for a live mutant (``... among 40 tried: step in 9, 10, 11``), or the
    input it found for one the tests still let pass."""
    search = catch.search if catch is not None else None
    if search is not None and search.outcome == "killed" and search.input:
        where = f" ({search.case})" if search.case else ""
        return f"; the recording's search found {search.input}{where}, yet the tests let it pass"
    if search is None or search.outcome != "live":
        return ""
    if search.tied and not search.outside:
        return (f"; no input varies {', '.join(search.tied)}, which every recorded call ties to its arrays' shapes: "
                "record calls with other shapes")
    if search.replaced:
        return (f"; the golden code changes {search.replaced} in place, and nothing else the recorded program holds "
                "it, so no test can tell a new array from the same one changed")
    if search.unmet:
        return (f"; no input the recording's search tried makes both sides of {search.unmet!r} equal, among "
                f"{tried_text(search.tried, search.inputs)}")
    if search.outside:
        return (f"; it differs on {search.outside}, which no recorded call passes, so no case was made: record a "
                "call with such values if the function must take them")
    return f"; the recording's search found no such input among {tried_text(search.tried, search.inputs)}"


def live_reason(kind: str, description: str, name: str = "", catch: MutantCatch | None = None,
                where: str = "") -> str:
    """One live mistake-shaped mutant named, with the input that would kill it and what the search tried
    (``where``: on what it passes, ``on every recorded input``)."""
    from lmrbench.authoring.mutants.mutant_hints import kill_hint

    who = f"{name}: " if name else f"{kind}: "
    passes = f"passes {where}" if where else "passes"
    if catch is not None and catch.search is not None and catch.search.knife:
        return (f"{who}{description} {passes}; only knife-edge inputs separate it (a one-ulp move of such an input, "
                "or breaking a tie in it, changes the golden result), so no fair case can kill it: a wrong answer of "
                "this shape passes")
    return f"{who}{description} {passes}; {kill_hint(kind, description)} would kill it{_search_text(catch)}"


def _dropped_parameter(m: MutantCatch, params: dict[str, str]) -> bool:
    """A ``drop_term``/``drop_offset`` mutant that drops a parameter (``drop 'warmup_steps' from ...``)."""
    dropped = m.description.split("drop '", 1)[-1].split("' from", 1)[0]
    return m.kind in ("drop_term", "drop_offset") and dropped in params


def recorded_reasons(catches: list[MutantCatch], unvaried: list[str],
                     pins: dict[str, dict[str, str]] | None = None) -> list[str]:
    """The recording's mistake-shaped mutants that no kept case kills, each named with the input that would kill
    it: those its search left live; in a recording without a search, those equivalent on every recorded input
    that it marked with a ``hint`` or that drop a parameter (as telling as a pinned one; ``pins``: the
    parameters per goal function). A mutant the search showed equivalent (random inputs do not separate it) is
    no weakness, and a pinned parameter already named by ``unvaried`` is left out."""
    from lmrbench.authoring.mutants.mutant_hints import TELLING_KINDS

    out = []
    for m in catches:
        if m.killed or m.kind not in TELLING_KINDS | {"drop_term"}:
            continue
        if m.search is not None:
            live = m.search.outcome == "live"
        else:
            live = m.equivalent and (bool(m.hint) or _dropped_parameter(m, (pins or {}).get(m.target, {})))
        if not live or (m.kind == "pin_parameter" and pinned_parameter(m) in unvaried):
            continue
        out.append(live_reason(m.kind, m.description, catch=m,
                               where="" if m.search is not None else "on every recorded input"))
    return list(dict.fromkeys(out))


def weak_reasons(mutants: list[MutantResult], unvaried: list[str], recorded: list[str] | None = None,
                 catches: dict[str, MutantCatch] | None = None) -> list[str]:
    """What lets a plausible wrong answer pass, besides the kill rate: each parameter no test varies (from the
    recording), each surviving mutant of a mistake kind (``mutant_hints.TELLING_KINDS``: a parameter pinned, a
    mask dropped, a branch forced...) named with the input that would kill it, and ``recorded``: the
    recording's live mistake-shaped mutants (``recorded_reasons``). ``catches``: the recording's mutants by
    description, for what its search tried."""
    from lmrbench.authoring.mutants.mutant_hints import TELLING_KINDS

    out = [f"no test varies {p}" for p in unvaried]
    for m in survivors(mutants):
        if m.kind == "pin_parameter":
            text = f"no test varies {pinned_parameter(m)}"
            out.append(text if text not in out else f"{text} ({m.name or m.kind} survives)")
        elif m.kind in TELLING_KINDS:
            out.append(live_reason(m.kind, m.description, m.name, (catches or {}).get(m.description)))
    shown = {m.description for m in survivors(mutants)}
    out += [r for r in recorded or [] if not any(f": {d} passes" in r for d in shown)]
    return list(dict.fromkeys(out))


NO_OP = "return None instead of the body"
"""The description of the mutant whose body does nothing (``constant_return`` of None)."""


def is_no_op(mutant: Any) -> bool:
    """Whether ``mutant``'s body does nothing: a test it passes measures nothing the function does, or less than
    its tolerance."""
    return bool(mutant.kind == "constant_return" and mutant.description == NO_OP)


def blind_tests(chosen: Sequence[tuple[str, str, Any]], reports: dict[int, TestReport], repo: Path) -> list[str]:
    """The tests a body that does nothing passes (``is_no_op``; ``chosen`` the mutants run, ``reports``
    theirs by number from 1; ``repo`` the repository, whose official scripts' test methods are read), named by
    function: a tolerance wider than the effect the test measures (an optimiser step of 5e-4 under atol 1e-3),
    or a test that checks nothing the function does."""
    from lmrbench.schemas.testrun import TestStatus

    out = []
    for k, (_goal, qual, mutant) in enumerate(chosen, start=1):
        report = reports.get(k)
        if not is_no_op(mutant) or report is None or report.status is TestStatus.INFRA_ERROR:
            continue
        passed = [c.test_id.rpartition("::")[2] for c in report.cases if c.outcome == "passed"]
        passed += [name for c in report.cases if c.outcome != "passed" and c.test_id.endswith(".py")
                   for name in _script_passes(repo / c.test_id, report.log_tail)]
        if passed:
            out.append(f"a {qual} that does nothing passes {', '.join(passed)} ({mutant_name(k, mutant.kind)}): "
                       "the tolerance is wider than the effect measured, or nothing the function does is checked")
    return out


_UNITTEST_FAILED = re.compile(r"^(?:FAIL|ERROR): (\w+) \(", re.M)


def _script_passes(script: Path, output: str) -> list[str]:
    """The test methods of an official unittest script that passed, from its output (unittest names only the
    ones that failed, under ``FAIL:`` or ``ERROR:``; nothing when the run never reached its summary)."""
    if not re.search(r"^Ran \d+ tests? in ", output, re.M):
        return []
    try:
        tree = pyparse.parse(script.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return []
    names = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
    failed = set(_UNITTEST_FAILED.findall(output))
    return [n for n in dict.fromkeys(names) if n not in failed]


def is_weak(result: ImplValidation, min_kill_rate: float) -> bool:
    """True for a valid result whose tests kill fewer than ``min_kill_rate`` of the mutants that ran, or
    let a plausible wrong answer pass (``weak_reasons``)."""
    rate = result.kill_rate
    return result.valid and ((rate is not None and rate < min_kill_rate) or bool(result.weak_reasons))


def weak_notes(result: ImplValidation) -> list[str]:
    """Why a valid result is weak, each reason as it was found: the kill rate when it is below the result's
    ``min_kill_rate``, then its ``weak_reasons`` (each live mistake with the input that would kill it)."""
    rate, floor = result.kill_rate, result.min_kill_rate
    notes = [f"its tests kill {result.mutants_killed}/{result.mutants_total} mutants ({rate:.0%}), below the "
             f"kill rate {floor:.0%}"] if rate is not None and floor is not None and rate < floor else []
    notes += list(result.weak_reasons)
    return notes or [f"its tests kill {result.mutants_killed}/{result.mutants_total} mutants"]


def kinds_text(kinds: dict[str, tuple[int, int]] | dict[str, list[int]]) -> str:
    """``negate 1/1, pin_parameter 2/3``: the kill rate per mutant kind."""
    return ", ".join(f"{kind} {v[0]}/{v[1]}" for kind, v in sorted(kinds.items()))


def verdict(valid: bool, weak: bool, killed: int, total: int, min_kill_rate: float,
            reasons: list[str] | None = None) -> str:
    """The valid column's text: ``yes (kills 12/12)``, ``weak: kills 2/12 = 17% < 75%``,
    ``weak: no test varies beta``."""
    kills = f"kills {killed}/{total}" if total else "no mutants ran"
    if not valid:
        return "no"
    if weak:
        parts = [f"{kills} = {killed / total:.0%} < {min_kill_rate:.0%}"] if total and killed / total < min_kill_rate \
            else []
        return "weak: " + "; ".join(parts + list(reasons or [])) if parts or reasons else f"weak: {kills}"
    return f"yes ({kills})"
