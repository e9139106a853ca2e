"""What validating an implementation will run: its settings, the problems that stop it before anything runs,
and the mutants of its golden code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lmrbench.authoring.record.testgen import TODO_MARK
from lmrbench.benchmark.validation.weakness import DEFAULT_MIN_KILL_RATE, is_no_op
from lmrbench.core.taskset import Task
from lmrbench.core.trust import impl_test_files
from lmrbench.defaults import recording_folder
from lmrbench.errors import LmrError
from lmrbench.schemas.task_info import Implementation

if TYPE_CHECKING:
    from lmrbench.authoring.mutants.mutants import Mutant
    from lmrbench.schemas.recording import MutantCatch


@dataclass
class ValidateOptions:
    """How thoroughly to validate."""

    repeat: int = 3
    """Golden runs per implementation; outcomes that disagree mark the test flaky."""
    timeout: float = 600.0
    """Wall-clock limit of one test run, in seconds."""
    max_mutants: int = 12
    """Most mutants run per implementation (picked evenly from the generated ones)."""
    min_kill_rate: float = DEFAULT_MIN_KILL_RATE
    """An implementation whose tests kill fewer mutants than this is valid but weak."""
    jobs: int = 1
    """Test runs at once, each in its own container (or, with a cluster, on any node)."""
    force: bool = False
    """Validate again even where a matching result exists."""
    rebuild: bool = False
    """Rebuild each task's environment."""
    check_tolerances: bool = True
    """Re-run the golden code in float64 once and report how close it came to the tolerances."""


def static_problems(task: Task, impl: Implementation) -> list[str]:
    """Reasons an implementation is invalid before anything runs: unfinished scaffolds. (What stops it from
    running at all, such as no tests or Git LFS pointers, is ``not_run.static_not_run``.)"""
    problems = []
    for f in impl_test_files(task, impl):
        text = (task.repo_dir / f).read_text(encoding="utf-8", errors="replace")
        if TODO_MARK in text:
            problems.append(f"{f}: scaffold still holds {TODO_MARK}")
    return problems


PlannedMutant = tuple[str, str, "Mutant"]
"""(goal file, qualname, mutant of the whole golden file)."""


@dataclass
class RecordedFacts:
    """What the implementation's recording (``unit_test/data/impl_<k>/index.json``) knows about its mutants."""

    pins: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per goal function (``file::qualname``), the recorded value of each scalar parameter."""
    grad: list[str] = field(default_factory=list)
    """Goal functions whose recorded results require grad."""
    equivalent: set[str] = field(default_factory=set)
    """Digests of the mutants equivalent on every recorded input."""
    unvaried: list[str] = field(default_factory=list)
    """Scalar parameters no case varies."""
    weak: list[str] = field(default_factory=list)
    """The mistake-shaped mutants no kept case kills, each with what would kill it
    (``weakness.recorded_reasons``)."""
    live: set[str] = field(default_factory=set)
    """Digests of the mutants the recording's search left live (run first: validation decides their fate)."""
    catches: dict[str, MutantCatch] = field(default_factory=dict)
    """The recording's mutants by description, with what its search tried."""

    def nested(self, target: str) -> dict[str, list[object]]:
        """The recorded values of the chains a goal function reads (``self.cfg.loss.gamma`` -> ``[2.0]``): the
        keys of its ``pins`` that are attribute or item paths, their source text read back as values."""
        import ast

        out: dict[str, list[object]] = {}
        for path, text in self.pins.get(target, {}).items():
            if "." in path or "[" in path:
                try:
                    out[path] = [ast.literal_eval(text)]
                except (ValueError, SyntaxError):
                    continue
        return out

    def plain_pins(self, target: str) -> dict[str, str]:
        """The recorded values of a goal function's own parameters (``beta`` -> ``0.1``)."""
        return {k: v for k, v in self.pins.get(target, {}).items() if "." not in k and "[" not in k}


def recorded_facts(task: Task, impl: Implementation) -> RecordedFacts:
    """The facts of the implementation's recording; empty when it has none (hand-written tests) or it is
    unreadable."""
    from pydantic import ValidationError

    from lmrbench.schemas.recording import RecordingIndex

    path = task.repo_dir / recording_folder(impl.index) / "index.json"
    try:
        index = RecordingIndex.model_validate_json(path.read_bytes())
    except (OSError, ValueError, ValidationError):
        return RecordedFacts()
    from lmrbench.benchmark.validation.weakness import recorded_reasons

    equivalent = {m.digest for m in index.mutants
                  if (m.search.outcome == "equivalent" if m.search is not None else m.equivalent)}
    live = {m.digest for m in index.mutants if m.search is not None and m.search.outcome == "live"}
    from lmrbench.authoring.check.taskdata import shape_tied

    tied = shape_tied(task, impl, [p.rpartition(": ")[2] for p in index.unvaried])
    unvaried = [p for p in index.unvaried if p.rpartition(": ")[2] not in tied]
    return RecordedFacts(index.pins, index.grad, equivalent, unvaried,
                         recorded_reasons(index.mutants, index.unvaried, index.pins), live,
                         {m.description: m for m in index.mutants})


def pick_mutants(mutants: list[PlannedMutant], limit: int, equivalent: set[str] | None = None,
                 live: set[str] | None = None) -> list[PlannedMutant]:
    """At most ``limit`` mutants, deterministic: first those the recording's search left ``live`` (validation's
    own run decides them), then the mistake kinds (``mutant_hints.TELLING_KINDS``) and then the others, every
    kind in turn (``mutants.sample_mutants``); those the recording found ``equivalent`` only when nothing else
    is left. The picks keep the planned order."""
    from lmrbench.authoring.mutants.mutant_hints import TELLING_KINDS
    from lmrbench.authoring.mutants.mutants import sample_mutants

    known, first = equivalent or set(), live or set()
    # the no-op mutant always runs: it finds tests blind to the function
    nothing = [pm for pm in mutants if pm[2].digest not in known and is_no_op(pm[2])][:limit]
    rest = [pm for pm in mutants if pm not in nothing]
    tiers = [nothing,
             [pm for pm in rest if pm[2].digest in first and pm[2].digest not in known],
             [pm for pm in rest if pm[2].digest not in known | first and pm[2].kind in TELLING_KINDS],
             [pm for pm in rest if pm[2].digest not in known | first and pm[2].kind not in TELLING_KINDS],
             [pm for pm in rest if pm[2].digest in known]]
    picked: list[PlannedMutant] = []
    for tier in tiers:
        picked += sample_mutants(tier, limit - len(picked), kind_of=lambda pm: pm[2].kind)
    order = {id(pm): k for k, pm in enumerate(mutants)}
    return sorted(picked, key=lambda pm: order[id(pm)])



def plan_mutants(task: Task, impl: Implementation, facts: RecordedFacts | None = None) -> list[PlannedMutant]:
    """Every mutant of every goal function of ``impl``, in a deterministic order; ``facts`` (the recording's)
    give the values ``pin_parameter`` pins and whether ``detach`` applies."""
    from lmrbench.authoring.mutants.mutants import generate_mutants  # LibCST: loaded only when mutants are made

    facts = facts or RecordedFacts()

    out: list[PlannedMutant] = []
    names = impl.qualnames
    for which, goal in enumerate(impl.goal_files):
        golden = task.golden_path(impl, which)
        try:
            source = golden.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise LmrError(f"cannot read the golden file: {exc}", golden) from None
        for q in names:
            try:
                target = f"{goal}::{q}"
                mutants = generate_mutants(source, q, file=goal, pins=facts.plain_pins(target),
                                           grad=target in facts.grad, nested=facts.nested(target))
            except LmrError:
                if len(impl.goal_files) > 1:
                    continue  # the function lives in another goal file
                raise
            out.extend((goal, q, m) for m in mutants)
    return out


def mutant_files(task: Task, impl: Implementation, goal: str, mutant: Mutant) -> dict[str, str]:
    """The goal files of a mutant variant: the mutated goal file, the other goal files golden."""
    return {
        other: mutant.source if other == goal else task.golden_path(impl, which).read_text(encoding="utf-8")
        for which, other in enumerate(impl.goal_files)
    }
