"""The plan of the search for inputs that kill the mutants the kept cases miss (``runtime/lmrbench_search.py``
runs it), and what the search found, as the host reads it back.

The plan lists, for each leaf the body reads (``gamma``, ``self.cfg.loss.gamma``), the values to try: first the
boundaries the body compares it with (``step < warmup_steps`` recorded with warmup 10 gives step 9, 10, 11; ``alpha
>= 0`` gives -1, 0, 1), then the values around an int leaf the body combines it with (``step`` near ``total_steps``:
a call past the last step), ten times larger and smaller for a float that a local compared with a number depends on
(``max_norm`` of ``coef = max_norm / total`` in ``if coef < 1.0``), then ``amplify.varied_values`` (zero among an
int's, so a count can become zero) and, where the body guards a value, zero for a float (``eps=0``), then the text
modes the body compares it with and one it does not (``unknown``: its fallback, often a ``raise``); an int
never recorded negative stays non-negative, and a size never recorded below 1 (``n_bins``) stays at least 1, unless
the body tests its sign; a leaf the body compares with ``None`` is tried as None (``self.momentum=None``: a
cumulative average).
A leaf the body compares or guards with another leaf (``good_steps >= growth_interval``, ``max(scale *
backoff, min_scale)``) is also tried near that leaf's value in each call the search varies (``relative``): the
run's magnitudes can keep a guard from ever binding.
Also: the keys the body reads with a default that the recorded dicts lack (``cfg.get("symmetric", False)``), the pairs
of leaves the body combines, the defaults of the arguments that no recorded call used (``labels=None``), the numbers
the body compares each leaf with (``exact``: a label smoothing of 0.5 against ``< 0.5`` is exact in any program, no
knife edge, and a ``raise`` there makes a case), whether the body guards a value (``guarded``: the search may then
make a count or a spread zero, inputs the guard says the function expects), and the forms of input the body is
written for (``body_forms``: large magnitudes, nan and inf, -inf entries, doubled spaces, an item without its batch
axis, one more axis, 0/1 ints, an item left None).
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lmrbench import pyparse
from lmrbench.authoring.record import amplify
from lmrbench.authoring.record.amplify_plans import in_domain, unset_settings, varied_leaves
from lmrbench.authoring.record.body_forms import input_forms
from lmrbench.authoring.record.body_helpers import access_path
from lmrbench.authoring.record.body_reads import BodyReads
from lmrbench.authoring.record.case_files import read_case
from lmrbench.errors import LmrError
from lmrbench.schemas.recording import tried_text

MAX_VALUES = 7
"""Most values tried per leaf."""
MAX_PAIRS = 4
"""Most pairs of leaves tried together."""
UNKNOWN = "unknown"
"""The text tried for a leaf the body compares with text modes: none of them, so the body's fallback runs (an
``else`` that raises, a default)."""
SEARCH_BUDGET = 20.0
"""Seconds the search may take per goal function (within the probe's own limit)."""


def _near(value: amplify.Scalar, like: amplify.Scalar) -> list[amplify.Scalar]:
    """``w - 1, w, w + 1`` for an int boundary ``w`` (as the leaf's type), ``w/2, w, 3w/2`` and ``1.01 w`` (just
    past it: a cap checked to be above 1 that binds on ratios near 1) for a float."""
    if type(value) is bool or type(like) is bool or type(value) is str:
        return []
    if type(like) is int and float(value).is_integer():
        return [int(value) - 1, int(value), int(value) + 1]
    w = float(value)
    return [w - 0.5, w, w + 0.5] if w == 0 else [w / 2, w, 1.5 * w, 1.01 * w]


def _boundaries(name: str, first: amplify.Scalar, reads: BodyReads,
                seen: dict[str, list[amplify.Scalar]]) -> list[amplify.Scalar]:
    out: list[amplify.Scalar] = []
    for other in reads.bounds.get(name, []):
        if other in ("inf", "-inf"):  # norm_type == float("inf")
            out += [float(other)] if type(first) is float and float(other) not in out else []
            continue
        value = _literal(other)
        if value is None:
            if other not in seen:
                continue
            value = seen[other][0]
        out += [v for v in _near(value, first) if v not in out]
    return out


def _literal(text: str) -> Any:
    """The number a bound's source text writes (``0.5``), or None (a name)."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None


def _partners(name: str, first: amplify.Scalar, reads: BodyReads,
              seen: dict[str, list[amplify.Scalar]]) -> list[amplify.Scalar]:
    """For an int leaf, the values around each int leaf the body combines it with (``step`` with
    ``total_steps`` in ``(step - warmup) / (total_steps - warmup)`` gives 199, 200, 201): a call past the last
    step, an index at a length, where a clamp of their ratio binds."""
    if type(first) is not int:
        return []
    out: list[amplify.Scalar] = []
    for p, q in reads.pairs:
        other = q if p == name else p if q == name else None
        if other is None or other not in seen or type(seen[other][0]) is not int:
            continue
        out += [v for v in _near(seen[other][0], first) if v not in out]
    return out


def _defaults(golden: str, qualname: str, goal: str, first_case: dict[str, Any]) -> dict[str, Any]:
    """Arguments whose default (a literal) no recorded call used: {name: default}."""
    from lmrbench.authoring.record.testgen import read_signature

    try:
        sig = read_signature(golden, qualname, goal)
    except LmrError:
        return {}
    recorded = {a["name"]: a["value"] for a in first_case["arguments"]}
    out: dict[str, Any] = {}
    for name, _, default in sig.params:
        if default is None or name not in recorded:
            continue
        try:
            value = ast.literal_eval(default)
        except (ValueError, SyntaxError):
            continue
        if type(value) in (type(None), bool, int, float, str) and json.dumps(recorded[name]) != json.dumps(value):
            out[name] = value
    return out


def search_plan(paths: list[Path], reads: BodyReads, golden: str, qualname: str, goal: str) -> dict[str, Any]:
    """The search's plan for a function whose recorded calls are ``paths`` and whose body reads as ``reads``."""
    seen, tied = varied_leaves(paths, reads)
    leaves: dict[str, list[amplify.Scalar | None]] = {}
    for name, values in seen.items():
        first = values[0]
        tries: list[amplify.Scalar]
        if type(first) is str:  # the modes the body compares it with, and one it does not (its fallback)
            modes = reads.literals.get(name, [])
            tries = [*(x for x in modes if x not in values), *([UNKNOWN] if modes and UNKNOWN not in modes else [])]
        else:
            wide = [first * 10.0, first / 10.0] if type(first) is float and first and name in reads.scaled else []
            tries = _boundaries(name, first, reads, seen) + _partners(name, first, reads, seen) + wide \
                + amplify.varied_values(first) + ([0.0] if type(first) is float and reads.guarded else [])
        tries = [x for x in dict.fromkeys(tries) if not any(type(x) is type(v) and x == v for v in values)]
        if type(first) is bool and not tries:  # a flag recorded both ways: each way on every base call (a
            tries = [True, False]  # ``terminated=True`` where the next state is no terminal one)
        tries = in_domain(name, tries, values, reads)  # a step or a count stays one
        tries = [x for x in tries if name not in tied or x != 1]  # 1 broadcasts against the recorded arrays
        unset: list[amplify.Scalar | None] = [None] if (name in reads.nones or name in reads.fallbacks) \
            and None not in values else []
        if unset or tries:  # None first: the path of a setting left unset
            leaves[name] = [*unset, *tries][:MAX_VALUES]
    for path, default in reads.gets.items():  # a key the recorded dict lacks, read with a default
        if path not in seen and isinstance(default, bool | int | float):
            leaves[path] = [*amplify.varied_values(default)[:MAX_VALUES]]
    for path, values in unset_settings(reads, seen).items():  # a setting the recorded config lacks or left None
        leaves.setdefault(path, [*values])
    # a setting left unset with each value of what it falls back to first (``original_max_position_embeddings``
    # set, ``max_position_embeddings`` then never read), then the leaves the body combines
    unset_pairs = [(p, q) for p in reads.fallbacks if p in seen for q in reads.relatives.get(p, [])]
    pairs = [[p, q] for p, q in [*unset_pairs, *reads.pairs] if p in leaves and q in leaves
             and not {p, q} & tied][:MAX_PAIRS]
    relative: dict[str, dict[str, Any]] = {}
    for name, others in reads.relatives.items():
        was: amplify.Scalar | None = seen[name][0] if name in seen else None
        # a number, or a leaf recorded None (or absent) that the body tests (``clip_ratio_low=None``) or that
        # falls back to another (``getattr(config, "head_dim", None) or hidden_size // heads``)
        if name not in tied and (type(was) in (int, float) or was is None and (
                name in reads.nones or name in reads.fallbacks)):
            relative[name] = {"to": others, "low": None if was is None else _low(name, seen[name], reads)}
    case, _ = read_case(paths[0])
    params = [a["name"] for a in case["arguments"]]
    body = _body(golden, qualname)  # parsed once for the checks below
    exact = {n: [float(v) for v in map(_literal, vs) if type(v) in (int, float)] for n, vs in reads.bounds.items()}
    return {"leaves": leaves, "pairs": pairs, "defaults": _defaults(golden, qualname, goal, case),
            "guarded": reads.guarded, **input_forms(body, params), "renames": _renames(reads, seen),
            "tied": sorted(tied), "relative": relative, "exact": exact}


def focus(golden: str, qualname: str, reads: BodyReads, mutants: list[str]) -> list[list[str]]:
    """For each mutant source, the leaves the lines it changes read, directly or through the locals there (``if
    low == high`` reads ``beta_fast`` through ``low``): the search tries them first while the mutant lives. The
    golden body is parsed and its aliases resolved once, for all of them."""
    import difflib

    from lmrbench.authoring.record.body_helpers import access_path, resolved

    func = _body(golden, qualname)
    if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
        return [[] for _ in mutants]
    known, paths = set(reads.paths) | set(reads.deps), set(reads.paths)
    by_line: dict[int, list[str]] = {}  # line -> the leaves read there
    for node in ast.walk(resolved(func)):
        line = getattr(node, "lineno", None)
        path = access_path(node)
        found = [path] if path in paths else []
        if isinstance(node, ast.Name) and node.id in known:
            found += sorted(reads.deps.get(node.id, set()) & paths) + [node.id]
        if line is not None and found:
            by_line.setdefault(line, []).extend(found)
    old = golden.splitlines()
    out: list[list[str]] = []
    for mutant in mutants:
        changed = sorted({i + 1 for tag, i1, i2, _, _ in difflib.SequenceMatcher(
            a=old, b=mutant.splitlines(), autojunk=False).get_opcodes() if tag != "equal"
            for i in range(i1, max(i2, i1 + 1))})
        out.append(list(dict.fromkeys(p for line in changed for p in by_line.get(line, []))))
    return out


def _low(name: str, recorded: list[amplify.Scalar], reads: BodyReads) -> int | None:
    """The least value the search may give ``name`` near another leaf: -1, 0 or 1 as ``in_domain`` keeps them
    (None: no bound)."""
    kept = [int(x) for x in in_domain(name, [-1, 0, 1], recorded, reads) if type(x) is int]
    return None if -1 in kept else min(kept, default=2)


def _body(golden: str, qualname: str) -> ast.AST | None:
    """The definition of ``qualname`` in ``golden``, or None when it does not parse or has none."""
    try:
        return pyparse.find_def(pyparse.parse(golden), qualname)
    except SyntaxError:
        return None


def _renames(reads: BodyReads, seen: dict[str, list[amplify.Scalar]]) -> list[list[str]]:
    """[recorded key, the key it falls back to] for a setting read with another key as its default
    (``scaling.get("rope_type", scaling.get("type"))``) that the recording gave under its first name: the scan
    gives it under the other name instead."""
    out: list[list[str]] = []
    for name, texts in reads.fallbacks.items():
        for text in texts:
            try:
                stmt = pyparse.parse(text).body[0]
            except (SyntaxError, ValueError, IndexError):
                continue
            other = access_path(stmt.value) if isinstance(stmt, ast.Expr) else None
            if name in seen and other and other not in seen and "[" in name and [name, other] not in out:
                out.append([name, other])
    return out


@dataclass(frozen=True)
class SearchReport:
    """What the search found for one goal function."""

    searched: int = 0
    """Mutants no recorded or added case killed, searched for."""
    killed: dict[str, str] = field(default_factory=dict)
    """Mutant digest -> the new case file that kills it."""
    live: tuple[str, ...] = ()
    """Digests of the mutants no stable input separated (random inputs not all tried, or only knife edges)."""
    equivalent: tuple[str, ...] = ()
    """Digests of the mutants no input separated, random inputs of the recorded shapes included."""
    inputs: int = 0
    """Inputs tried."""
    tried: tuple[str, ...] = ()
    """What the inputs set (``gamma=0.5``, ``labels=None``, ``random inputs of the recorded shapes``)."""
    edges: tuple[str, ...] = ()
    """Digests of mutants that only knife-edge inputs separated."""
    tied: tuple[str, ...] = ()
    """Leaves tied to the arrays' shapes (a head count) that no input varied (alone, or with its arrays cut): no
    mutant is shown equivalent."""
    outside: dict[str, str] = field(default_factory=dict)
    """Mutant digest -> an input outside what the recorded calls pass that separates it (soft values of a 0/1
    array): named with the live mutant, never made a case."""
    unmet: dict[str, str] = field(default_factory=dict)
    """Mutant digest -> the comparison whose boundary it moves that no input tried met (``> score_threshold``):
    live, since only such an input can tell it."""
    replaced: dict[str, str] = field(default_factory=dict)
    """Mutant digest -> the array of ``self`` that the golden code changes in place and the mutant replaces by a new
    one, which nothing else the recording saw holds (``self.u``): live, since no value tells it."""

    @classmethod
    def from_json(cls, data: object, source: Path, where: str) -> SearchReport:
        """The ``search`` entry of a probe report, or LmrError naming the file."""
        if data is None:
            return cls()
        try:
            assert isinstance(data, dict)
            return cls(searched=int(data["searched"]), killed={str(k): str(v) for k, v in data["killed"].items()},
                       live=tuple(map(str, data["live"])), equivalent=tuple(map(str, data["equivalent"])),
                       inputs=int(data["tried"]), tried=tuple(map(str, data["what"])),
                       edges=tuple(map(str, data.get("edges", []))),
                       outside={str(k): str(v) for k, v in data.get("outside", {}).items()},
                       unmet={str(k): str(v) for k, v in data.get("unmet", {}).items()},
                       replaced={str(k): str(v) for k, v in data.get("replaced", {}).items()},
                       tied=tuple(map(str, data.get("tied", []))))
        except (AssertionError, KeyError, TypeError, ValueError, AttributeError):
            raise LmrError(f"{where}: the search's report does not read", source) from None

    def tried_text(self, limit: int = 8) -> str:
        """``12 input(s): gamma=0.5, gamma=4.0, labels=None and 9 more``: what the search tried."""
        return tried_text(self.tried, self.inputs, limit)
