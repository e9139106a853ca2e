"""How well recorded tests tell right from wrong on tasks they were not tuned on, and whether ``validate`` says
so. Two sets of numpy tasks, each a small repository whose driver runs the goal function on its default
hyperparameters only, as real drivers do: ``main`` (``wrong_answer_tasks.py``: a label-smoothed NLL, top-k/top-p
filtering, rotary embeddings, a beam scorer's length penalty, generalized advantage estimation with done flags, a
supervised contrastive loss, a focal loss method reading a nested config, a warmup-cosine schedule called once per
step, a PPO per-token KL reward) and ``heldout`` (``heldout_tasks.py`` and ``heldout_fresh_tasks.py``, kept out
of every test fixture so that it stays a held-out measure; ``fresh`` is the second file alone) and ``fresh2``
(``heldout_fresh2_tasks.py``, written after the recorder was tuned on the others, so the clean held-out measure:
CutMix, a Gumbel-softmax with its backward, prioritized replay's importance weights) and ``fresh3``
(``heldout_fresh3_tasks.py``, written after fresh2's CutMix survivor led to the check of untouched arguments: a
soft Dice loss with options the driver never takes, a weight EMA method with a warmed-up decay) and ``fresh4``
(``heldout_fresh4_tasks.py``, written before any further rule of the recorder: a Lookahead optimiser's step whose
slow weights are its own copies, the expected calibration error with equal-width bins and an empty-bin guard, a
mixture-of-experts top-k router with an expert capacity and a load-balancing loss read from a nested config) and
``fresh5`` (``heldout_fresh5_tasks.py``, written with fresh4 and kept apart from it as a sealed measure: a
batch-norm forward with running statistics updated in place, a generalized IoU box loss with an eps guard and a
reduction option, a cyclical KL-weight schedule called once per step) and ``fresh6``
(``heldout_fresh6_tasks.py``, written before its first run and sealed until then: an Adam step with bias
corrections, decoupled or coupled weight decay and an AMSGrad flag the driver never sets, a batch-hard triplet loss
with squared-distance and soft-margin options, causal attention with ALiBi slopes for any head count and a key
padding mask) and ``fresh7`` (``heldout_fresh7_tasks.py``, written before its first run and sealed until then:
layer normalisation over the last axes of ``self.normalized_shape`` with an elementwise-affine flag, R-Drop's
cross-entropy of two passes and symmetric KL weighted by ``self.args.alpha`` with a padding mask) and ``fresh8``
(``heldout_fresh8_tasks.py``, written before its first run and sealed until then: DDPM's ancestral sampling step
with per-sample timesteps, a clip flag and a variance type the driver never changes, called once per timestep;
VICReg's variance, invariance and covariance loss reading ``self.cfg.loss``; the class-balanced loss of Cui et al.
from the effective number of samples, with a sigmoid form the driver never takes) and ``fresh9``
(``heldout_fresh9_tasks.py``, written before its first run and sealed until then: T5's bucketed relative position
bias reading ``self.num_buckets``, ``self.max_distance`` and ``self.bidirectional``, with a causal form, a cache
offset and distances past ``max_distance`` the driver never reaches; Adafactor's step with its factored second
moment and update clipping, changing parameters and state in place, called once per step, with momentum, weight
decay, an explicit step size and warm-up init the driver never sets; n-gram repeat blocking in beam search, called
once per decoding step on a growing prefix, with sizes 1 and off the driver never takes) and ``fresh10``
(``heldout_fresh10_tasks.py``, written before its first run and sealed until then: dynamic loss scaling for float16
training, changing the gradients and its own state in place, called once per step, with NaNs, a hysteresis and
scale bounds the driver never reaches; the CTC loss over padded batches, with another blank, other reductions,
empty targets and ``zero_infinity`` the driver never takes; DINO's centred and sharpened teacher over multi-crop
views, reading ``self.*`` and updating its centre, called once per step with the epoch, never past the
temperature warm-up nor with other than two global crops; speculative decoding's acceptance rule with its
residual draw, called once per round, with a greedy mode the driver never sets) and ``fresh11``
(``heldout_fresh11_tasks.py``, written before its first run and sealed until then: sparsemax along any axis with a
mask, fully masked slices and ranks other than 2 the driver never gives; Viterbi decoding of a linear-chain CRF with
start and end transitions, reading ``self.*``, called once per batch, with padding masks, the batch-first layout
and the input checks the driver never takes; rotary frequencies for context extension from a nested
``rope_scaling`` dict, with linear and dynamic NTK scaling, YaRN's given or mscale-based attention factor, its
untruncated, clamped and equal ramp bounds, a head_dim and a partial rotary share the driver never sets; PPO's
clipped policy loss with the dual clip, reading ``self.config.actor``, called many times a step, with asymmetric
clip ranges, other aggregation modes, empty masks and extreme log-ratios the driver never reaches) and ``fresh12``
(``heldout_fresh12_tasks.py``, written before its first run and sealed until then: V-trace's targets and advantages
over time-major unrolls with done flags, called once per learner step, with ``c_bar``, ``pg_rho_bar`` and
``lambda_`` apart from ``rho_bar``, thresholds of None and single-environment arrays the driver never gives; the
LAMB optimiser's step reading ``self.defaults`` and changing its moments and the named parameters in place, called
once per step, with no bias correction, an adaptation exclusion list of its own, a ``max_trust_ratio``, zero norms
and missing gradients the driver never reaches; perplexity by a strided sliding window over a model object's
log-probabilities, with a ``max_length`` apart from ``model.config.n_positions``, windows that do not overlap, a
[1, n] batch and the argument checks the driver never takes; Soft-NMS with gaussian decay, its ``sigma`` and hard
NMS the driver never sets, and IoUs and scores exactly at their thresholds) and ``fresh13``
(``heldout_fresh13_tasks.py``, written before its first run and sealed until then: sentence-level BLEU with Chen
and Cherry's smoothing methods, reading its order, weights and ``smoothing.method`` from a nested config, with
short and empty hypotheses, empty references, weights of its own and the methods other than the exponential decay
the driver never takes; a logits processor reading ``self.*``, called once per decoding step, CTRL's
repetition penalty then the locally typical filter, with banned tokens, a minimum to keep, another filter value and
either part off the driver never sets; the selective scan of a Mamba block with the step-size bias and softplus,
the skip term and the gate, with fixed B and C, the last state, each option alone and large step sizes the driver
never gives; SGDR's ``get_lr`` over each group's ``initial_lr``, called once per step, with ``T_mult`` above 1, a
warm-up, a decayed peak and a floor the driver never sets) and ``fresh14`` (``heldout_fresh14_tasks.py``, written
before its first run and sealed until then: the knowledge-distillation loss of Hinton et al. reading
``self.cfg.distill``, its temperature, ``alpha`` and T squared scaling, with padded positions' ``ignore_index``, the
"sum" and "none" reductions, banned teacher classes and batches with no label the driver never gives; the Lion
optimiser's step changing the parameters and their momenta in place, called once per step, with other betas,
``maximize``, missing gradients and a sign of zero the driver never reaches; MoCo's contrastive loss over its queue
of negative keys reading ``self.*``, then the keys enqueued from ``self.ptr``, with a batch that wraps part way round
the queue, the normalisation off, zero vectors and ties the driver never gives; the adaptive KL controller of
Ziegler et al., updated once per step, with another clip, bounds on the coefficient, no target, per-sample and
non-finite KLs the driver never sets) and ``fresh15`` (``heldout_fresh15_tasks.py``, written before its first
run and sealed until then: the preference loss of direct preference optimisation reading ``self.cfg.loss``, with
cDPO's label smoothing, SLiC's hinge, IPO's squared loss, a reference-free form, per-pair weights and margins large
enough to overflow a naive log-sigmoid the driver never gives; the EMA codebook of VQ-VAE's quantiser, changing its
moving averages and codebook in place, called once per step, with Laplace-smoothed cluster sizes, another decay and
commitment cost, eval mode and a mask of positions the driver never sets; gradual magnitude pruning on Zhu and
Gupta's cubic schedule, called once per step, zeroing the model's own arrays in place, with the global scope, a
nonzero initial sparsity, a one-step schedule and weights that grow back the driver never reaches; the priority
update of proportional prioritized replay on a sum tree and a min tree, last of repeated indices counting, with
zero TD errors, another alpha and eps, a capacity that is not a power of two, indices out of range, unequal sizes
and empty updates the driver never gives) and ``fresh16`` (``heldout_fresh16_tasks.py``, written before its first
run and sealed until then: ArcFace's additive angular margin loss reading ``self.cfg.head``, with the easy margin,
target angles past ``pi - m`` and their fall-back, ignored labels, zero embeddings and another scale and margin the
driver never gives; sharpness-aware minimisation over SGD with momentum, a step that calls its closure twice and
changes the weights and buffers in place, with ASAM's adaptive form, weight decay, Nesterov momentum, tensors
without gradient and a zero gradient the driver never reaches; Rainbow's multi-step transitions, called once per
environment step, with truncation told apart from termination, both at once, clipped rewards, another gamma and n
the driver never sets; spectral normalisation by the power iteration carried over in vectors updated in place,
called once per forward, with eval mode, more iterations, another ``dim``, a zero weight and the Lipschitz bound
``coeff`` the driver never sets) and ``fresh17`` (``heldout_fresh17_tasks.py``, written before its first run and
sealed until then: the LDAM loss of Cao et al. with deferred re-weighting reading ``self.cfg.loss.ldam`` and
``self.cfg.loss.drw``, with another reduction, no re-weighting, an empty class, an empty batch and another ``s``
and ``max_m`` the driver never gives; adaptive gradient clipping over the model's parameter and gradient dicts,
called once per step, changing the gradients in place unit by unit, with ``exclude``, gradient centralisation,
missing gradients, float32 gradients and units exactly at their bound the driver never reaches; NDCG@k with
graded relevance and tie-averaged DCG, with ties inside and across the cutoff, a tie-breaking mode, masks, k of
None, linear gains and queries with nothing relevant the driver never gives; TD(lambda) with linear values,
called once per environment step, changing its weights and trace in place, with replacing and dutch traces,
truncation, a gamma below 1 and terminal states with features the driver never sets). Each task is
authored as ``lmrbench task new`` does and recorded with ``task record`` from its driver; every plausible wrong
answer and every correct answer in another style is then graded as ``lmrbench evaluate`` grades a candidate (local
sandbox), and the task is validated as ``lmrbench validate`` validates it (the library's ``validate_task``, local
sandbox, one golden run: repeats only look for flakiness).

Prints, per task and in all: wrong answers rejected, correct answers passed, validate's verdict, and "weak notes
named K of the W wrong answers that passed". A passing wrong answer counts as named when one of validate's notes
on the task names its gap. The notes are the weak reasons (``no test varies gamma``, the recording's equivalent
mistakes) and the surviving mutants (their description and the golden lines their diff removes). Each wrong answer
lists its gap in the task's ``gaps``: identifiers (``gamma``, ``kl_ctl.value``) must occur as whole words in a weak
reason or a survivor's description (``gamma`` in ``no test varies self.cfg.loss.gamma``); code fragments
(``max(num_fg, 1.0)``) may also occur in a line that a survivor's diff removes, since such a survivor changes the
very code the wrong answer gets wrong.

Before anything is recorded, the corpus itself is checked with numpy, for every task that has ``check`` (calls of
the goal on general inputs): each wrong answer must differ from the golden code on some call (a value, a shape, or
raising where the other does not) and each correct answer must agree on every call (rtol 1e-5); a bad entry is
reported, by name, on a ``corpus:`` line.

    python benchmarks/wrong_answers.py [--set main|heldout|fresh|fresh2|...|fresh16|fresh17|all]
                                       [--only NAME] [--no-probe] [--no-validate] [--check] [--summary] [--why]

``--check`` checks the corpus only (seconds); ``--no-probe`` records by coverage alone (``record_tests(probe=
False)``), for comparison; ``--no-validate`` skips validate and its notes.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import textwrap
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from heldout_fresh2_tasks import TASKS as FRESH2  # noqa: E402
from heldout_fresh3_tasks import TASKS as FRESH3  # noqa: E402
from heldout_fresh4_tasks import TASKS as FRESH4  # noqa: E402
from heldout_fresh5_tasks import TASKS as FRESH5  # noqa: E402
from heldout_fresh6_tasks import TASKS as FRESH6  # noqa: E402
from heldout_fresh7_tasks import TASKS as FRESH7  # noqa: E402
from heldout_fresh8_tasks import TASKS as FRESH8  # noqa: E402
from heldout_fresh9_tasks import TASKS as FRESH9  # noqa: E402
from heldout_fresh10_tasks import TASKS as FRESH10  # noqa: E402
from heldout_fresh11_tasks import TASKS as FRESH11  # noqa: E402
from heldout_fresh12_tasks import TASKS as FRESH12  # noqa: E402
from heldout_fresh13_tasks import TASKS as FRESH13  # noqa: E402
from heldout_fresh14_tasks import TASKS as FRESH14  # noqa: E402
from heldout_fresh15_tasks import TASKS as FRESH15  # noqa: E402
from heldout_fresh16_tasks import TASKS as FRESH16  # noqa: E402
from heldout_fresh17_tasks import TASKS as FRESH17  # noqa: E402
from heldout_fresh_tasks import TASKS as FRESH  # noqa: E402
from heldout_tasks import TASKS as HELDOUT  # noqa: E402
from wrong_answer_tasks import TASKS as MAIN  # noqa: E402

from lmrbench.authoring.record.record import record_tests  # noqa: E402
from lmrbench.authoring.task.task_new import create_task  # noqa: E402
from lmrbench.authoring.task.task_spec import FunctionRef, TaskSpec  # noqa: E402
from lmrbench.benchmark.sandbox.running.local import LocalRunner  # noqa: E402
from lmrbench.benchmark.validation.plan import ValidateOptions  # noqa: E402
from lmrbench.benchmark.validation.task import validate_task  # noqa: E402
from lmrbench.benchmark.validation.weakness import survivors, verdict  # noqa: E402
from lmrbench.core.taskset import Task  # noqa: E402
from lmrbench.errors import LmrError  # noqa: E402
from lmrbench.harness.sandbox import Sandbox  # noqa: E402
from lmrbench.harness.spec import Candidate  # noqa: E402
from lmrbench.harness.variant import evaluate_variant  # noqa: E402
from lmrbench.schemas.testrun import TestStatus  # noqa: E402
from lmrbench.schemas.validation import ImplValidation  # noqa: E402

SETS = {"main": MAIN, "heldout": HELDOUT + FRESH, "fresh": FRESH, "fresh2": FRESH2, "fresh3": FRESH3,
        "fresh4": FRESH4, "fresh5": FRESH5, "fresh6": FRESH6,
        "fresh7": FRESH7, "fresh8": FRESH8, "fresh9": FRESH9, "fresh10": FRESH10,
        "fresh11": FRESH11, "fresh12": FRESH12, "fresh13": FRESH13, "fresh14": FRESH14,
        "fresh15": FRESH15, "fresh16": FRESH16, "fresh17": FRESH17,
        "all": MAIN + HELDOUT + FRESH + FRESH2 + FRESH3 + FRESH4 + FRESH5 + FRESH6 + FRESH7 + FRESH8 + FRESH9
        + FRESH10 + FRESH11 + FRESH12 + FRESH13 + FRESH14 + FRESH15 + FRESH16 + FRESH17}
"""The task sets ``--set`` picks from."""


def author(spec: dict[str, Any], root: Path) -> Task:
    """The task of one corpus entry, made as ``lmrbench task new`` makes it."""
    source = root / "src"
    files = dict(spec["files"])
    files["requirements.txt"] = "numpy\n"
    for rel, text in files.items():
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        (source / rel).write_text(textwrap.dedent(text) if rel.endswith(".txt") else text)
    task_spec = TaskSpec(source=str(source), functions=[FunctionRef.parse(str(spec["function"]))],
                         instructions=["Implement it as its docstring says."], bench=root / "bench",
                         category="Training Objectives & Optimization", name=str(spec["name"]))
    return create_task(task_spec)


def grade(box: Sandbox, task: Task, goal: str, source: str, folder: Path) -> tuple[TestStatus, str]:
    """The status of one candidate goal file, graded as ``evaluate`` grades it, and its first failing test with
    the start of its message ('' when none failed)."""
    (folder / goal).parent.mkdir(parents=True, exist_ok=True)
    (folder / goal).write_text(source)
    report = evaluate_variant(box, task, task.info.implementation(1), Candidate(folder=folder), timeout=300)
    failed = [c for c in report.cases if c.outcome in ("failed", "error")]
    why = f"{failed[0].test_id}: {' '.join(failed[0].message.split())[:300]}" if failed else report.detail[:300]
    return report.status, why


# -- the corpus check ---------------------------------------------------------------------------------------------


def _namespace(source: str, label: str) -> dict[str, Any]:
    """The globals of a goal file run as a module."""
    ns: dict[str, Any] = {"__name__": f"corpus_{abs(hash(label))}"}
    exec(compile(source, label, "exec"), ns)  # noqa: S102 - the corpus is this project's own code
    return ns


def _outcomes(calls: list[Callable[[], object]]) -> list[tuple[str, object]]:
    """Each call's result, or the name of what it raised."""
    out: list[tuple[str, object]] = []
    for call in calls:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                out.append(("value", call()))
            except Exception as exc:  # noqa: BLE001 - raising is an outcome to compare
                out.append(("raised", type(exc).__name__))
    return out


def _agree(a: object, b: object) -> bool:
    """Equal within rtol 1e-5 (NaN equal to NaN), element by element through tuples and lists."""
    if isinstance(a, tuple | list) or isinstance(b, tuple | list):
        return (isinstance(a, tuple | list) and isinstance(b, tuple | list) and len(a) == len(b)
                and all(_agree(x, y) for x, y in zip(a, b, strict=True)))
    try:
        x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    except (TypeError, ValueError):
        return a == b
    return x.shape == y.shape and bool(np.allclose(x, y, rtol=1e-5, atol=1e-8, equal_nan=True))


def corpus_problems(spec: dict[str, Any]) -> list[str]:
    """The task's bad corpus entries: a wrong answer that agrees with the golden code on every check call, a
    correct one that disagrees on some call, an answer that does not load; empty without ``check``."""
    check = spec.get("check")
    if check is None:
        return []
    goal_file, _, _ = str(spec["function"]).partition("::")
    golden = _outcomes(check(_namespace(spec["files"][goal_file], f"{spec['name']} golden")))
    problems = []
    for kind in ("wrong", "right"):
        for what, body in spec[kind].items():
            try:
                mine = _outcomes(check(_namespace(str(spec["head"]) + body, f"{spec['name']} {what}")))
            except Exception as exc:  # noqa: BLE001 - a corpus entry that does not load is reported
                problems.append(f"{kind} answer {what!r} does not load: {type(exc).__name__}: {exc}")
                continue
            same = [g[0] == m[0] and (g[0] == "raised" or _agree(g[1], m[1])) for g, m in zip(golden, mine,
                                                                                             strict=True)]
            if kind == "wrong" and all(same):
                problems.append(f"wrong answer {what!r} agrees with the golden code on every check call")
            if kind == "right" and not all(same):
                problems.append(f"correct answer {what!r} differs from the golden code on check call "
                                f"{same.index(False) + 1}")
    return problems


# -- validate's notes ---------------------------------------------------------------------------------------------


def notes_of(result: ImplValidation) -> list[tuple[str, str]]:
    """validate's notes on one implementation: (text, golden lines removed) of each weak reason (no lines) and
    of each surviving mutant (its name and description; the lines its diff removes)."""
    notes = [(reason, "") for reason in result.weak_reasons]
    for m in survivors(result.mutants):
        removed = "\n".join(line[1:] for line in m.diff.splitlines()
                            if line.startswith("-") and not line.startswith("---"))
        notes.append((f"{m.name or m.kind}: {m.description}", removed))
    return notes


def names_gap(gap: list[str], notes: list[tuple[str, str]]) -> bool:
    """True when a note names one of ``gap``: an identifier (dots allowed) as a whole word of a note's text; a
    code fragment in a note's text or in the golden lines its mutant removes."""
    for key in gap:
        if re.fullmatch(r"[A-Za-z_][\w.]*", key):
            pattern = re.compile(rf"(?<!\w){re.escape(key)}(?!\w)")  # gamma names self.cfg.loss.gamma
            if any(pattern.search(text) for text, _ in notes):
                return True
        elif any(key in text or key in removed for text, removed in notes):
            return True
    return False


# -- the run ------------------------------------------------------------------------------------------------------


def run_task(spec: dict[str, Any], tmp: Path, box: Sandbox, args: argparse.Namespace) -> list[int]:
    """Record, grade and validate one task; prints its lines; returns [wrong rejected, wrong, correct passed,
    correct, wrong passed, of them named by a note]."""
    root = tmp / str(spec["name"])
    task = author(spec, root)
    start = time.perf_counter()
    result = record_tests(task, 1, str(spec["command"]), sandbox=box, probe=not args.no_probe)
    took = time.perf_counter() - start
    if args.summary:
        print("\n".join(f"  {line}" for line in result.summary))
    goal = str(spec["function"]).partition("::")[0]
    counts = {"wrong": [0, 0], "right": [0, 0]}
    passed_wrong: list[tuple[str, str]] = []
    failed_right: list[str] = []
    for kind in ("wrong", "right"):
        for k, (what, body) in enumerate(spec[kind].items()):
            status, why = grade(box, task, goal, str(spec["head"]) + body, root / f"{kind}-{k}")
            good = status is (TestStatus.FAILED if kind == "wrong" else TestStatus.PASSED)
            counts[kind][0] += good
            counts[kind][1] += 1
            if not good and kind == "wrong":
                passed_wrong.append((what, status.value))
            elif not good:
                failed_right.append(f"{what} ({status.value}{': ' + why if args.why and why else ''})")
    line = (f"{spec['name']}: {len(result.cases)} cases recorded in {took:.1f} s; wrong rejected "
            f"{counts['wrong'][0]}/{counts['wrong'][1]}, correct passed {counts['right'][0]}/{counts['right'][1]}")
    named: dict[str, bool] = {}
    if not args.no_validate:
        res = validate_task(task.path, sandbox="local", run_dir=root / "validate",
                            options=ValidateOptions(repeat=1))[0]
        notes = notes_of(res)
        gaps = spec.get("gaps", {})
        named = {what: names_gap(gaps.get(what, []), notes) for what, _ in passed_wrong}
        said = verdict(res.valid, res.weak, res.mutants_killed, res.mutants_total, res.min_kill_rate,
                       res.weak_reasons)
        line += (f"; validate: {said}; weak notes named {sum(named.values())} of the {len(passed_wrong)} wrong "
                 "answers that passed")
    print(line)
    for what, status in passed_wrong:
        mark = "" if args.no_validate else (" [named by a note]" if named[what] else " [no note names it]")
        print(f"  wrong answer not rejected: {what} ({status}){mark}")
    for what in failed_right:
        print(f"  correct answer not passed: {what}")
    return [counts["wrong"][0], counts["wrong"][1], counts["right"][0], counts["right"][1], len(passed_wrong),
            sum(named.values())]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", choices=sorted(SETS), default="main", help="which tasks (default: main)")
    parser.add_argument("--only", help="one task by name")
    parser.add_argument("--no-probe", action="store_true", help="record by coverage alone (the old selection)")
    parser.add_argument("--no-validate", action="store_true", help="skip validate and its weak notes")
    parser.add_argument("--check", action="store_true", help="check the corpus with numpy only")
    parser.add_argument("--summary", action="store_true", help="print each recording's summary")
    parser.add_argument("--why", action="store_true", help="name the test a correct answer fails, and its message")
    args = parser.parse_args()
    specs = [s for s in SETS[args.set] if not args.only or s["name"] == args.only]
    bad = 0
    for spec in specs:
        for problem in corpus_problems(spec):
            print(f"corpus: {spec['name']}: {problem}")
            bad += 1
    if args.check:
        print(f"corpus: {bad} bad entries in {len(specs)} tasks")
        return 1 if bad else 0
    box = Sandbox(LocalRunner())
    totals, failed = [0] * 6, 0
    with tempfile.TemporaryDirectory(prefix="lmrbench-wrong-") as tmp:
        for spec in specs:
            try:
                counts = run_task(spec, Path(tmp), box, args)
            except LmrError as exc:  # one task that cannot be authored or recorded: say so, go on
                print(f"{spec['name']}: not measured: {exc}")
                failed += 1
                continue
            totals = [t + n for t, n in zip(totals, counts, strict=True)]
    line = f"in all: wrong rejected {totals[0]}/{totals[1]}, correct passed {totals[2]}/{totals[3]}"
    if not args.no_validate:
        line += f"; weak notes named {totals[5]} of the {totals[4]} wrong answers that passed"
    print(line + (f"; {failed} task(s) not measured" if failed else ""))
    return 1 if bad or failed else 0


if __name__ == "__main__":
    sys.exit(main())
