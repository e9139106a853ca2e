"""Recorded tests that find their own blind spots: parameters at any depth (a focal loss reading
``self.cfg.loss.gamma``), calls from the whole run (a schedule called once per step), a search for the input that
kills a mutant (a guard the driver never trips), and ties that never fail a correct answer."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from helpers.record_fixture import grade, make_task
from lmrbench.authoring.record.amplify import leaf_values
from lmrbench.authoring.record.body_reads import body_reads
from lmrbench.authoring.record.record import record_tests
from lmrbench.benchmark.sandbox.running.local import LocalRunner
from lmrbench.harness.sandbox import Sandbox
from lmrbench.runtime import lmrbench_leaves
from lmrbench.schemas.recording import RecordingIndex
from lmrbench.schemas.testrun import TestStatus

sys.path.insert(0, str(Path(lmrbench_leaves.__file__).parent))  # the probe imports its siblings by shipped names
import lmrbench_search as search  # noqa: E402
import lmrbench_values as lv  # noqa: E402
import lmrbench_variations as variations  # noqa: E402

CONFIG = '''
    from dataclasses import dataclass, field


    @dataclass
    class LossConfig:
        gamma: float = 2.0
        alpha: float = 0.25


    @dataclass
    class Config:
        loss: LossConfig = field(default_factory=LossConfig)
        name: str = "focal"
'''
FOCAL_HEAD = '''import numpy as np


class FocalLoss:
    def __init__(self, cfg):
        self.cfg = cfg

    def loss(self, logits, targets):
        """Binary focal loss, mean over entries: (1 - p_t) ** gamma weighting, alpha balancing when alpha >= 0."""
'''
FOCAL = '''        p = 1.0 / (1.0 + np.exp(-logits))
        pt = np.where(targets == 1, p, 1.0 - p)
        loss_cfg = self.cfg.loss
        weight = (1.0 - pt) ** loss_cfg.gamma
        if loss_cfg.alpha >= 0:
            weight = weight * np.where(targets == 1, loss_cfg.alpha, 1.0 - loss_cfg.alpha)
        return float(np.mean(-weight * np.log(np.clip(pt, 1e-12, 1.0))))
'''
FOCAL_PINNED = FOCAL.replace("** loss_cfg.gamma", "** 2.0")
FOCAL_RIGHT = '''        gamma, alpha = self.cfg.loss.gamma, self.cfg.loss.alpha
        prob = np.exp(-np.logaddexp(0.0, -logits))
        p_t = prob * targets + (1 - prob) * (1 - targets)
        a_t = alpha * targets + (1 - alpha) * (1 - targets) if alpha >= 0 else 1.0
        return float((a_t * (1 - p_t) ** gamma * -np.log(np.maximum(p_t, 1e-12))).mean())
'''
FOCAL_DRIVER = '''
    import numpy as np

    from model.config import Config
    from model.focal import FocalLoss

    rng = np.random.default_rng(0)
    criterion = FocalLoss(Config())
    for _ in range(3):
        print(criterion.loss(rng.normal(size=(4, 3)), (rng.random((4, 3)) < 0.3).astype(np.int64)))
'''


pytestmark = pytest.mark.xdist_group("search")  # the module's recorded task, made once on one worker

@pytest.fixture(scope="module")
def local():
    return Sandbox(LocalRunner())


@pytest.fixture(scope="module")
def focal(tmp_path_factory, local):
    task = make_task(tmp_path_factory.mktemp("focal"), "model/focal.py::FocalLoss.loss",
                     extra={"model/config.py": CONFIG, "model/focal.py": FOCAL_HEAD + FOCAL, "run.py": FOCAL_DRIVER})
    return task, record_tests(task, 1, "python run.py", sandbox=local)


def test_leaves_are_named_by_their_access_path():
    case = {"arguments": [{"name": "beta", "kind": "positional_or_keyword", "value": 0.1},
                          {"name": "cfg", "kind": "positional_or_keyword",
                           "value": {"$": "dict", "items": [["mode", "sum"], ["betas", {"$": "tuple",
                                                                                       "items": [0.9, 0.99]}]]}}],
            "self": {"$": "dict", "items": [["cfg", {"$": "dataclass", "type": "m.C", "fields": {
                "loss": {"$": "dataclass", "type": "m.L", "fields": {"gamma": 2.0}}}}]]}}
    assert lmrbench_leaves.leaves(case, {}) == {"beta": 0.1, 'cfg["mode"]': "sum", 'cfg["betas"][0]': 0.9,
                                                 'cfg["betas"][1]': 0.99, "self.cfg.loss.gamma": 2.0}
    assert lmrbench_leaves.put(case, {}, "self.cfg.loss.gamma", 0.5)
    assert lmrbench_leaves.get(case, {}, "self.cfg.loss.gamma") == 0.5
    assert not lmrbench_leaves.put(case, {}, "self.cfg.loss.beta", 0.5)
    # a key the recorded dict lacks (read by the body with a default) is added; a field a dataclass lacks is not
    assert lmrbench_leaves.put(case, {}, 'cfg["symmetric"]', True)
    assert lmrbench_leaves.get(case, {}, 'cfg["symmetric"]') is True


def test_the_body_and_its_helpers_read_paths_at_any_depth():
    source = '''
class KLReward:
    def reward(self, scores, logprobs, ref_logprobs, warmup):
        """Per-token reward: scores minus the KL penalty."""
        kl = self._kl(logprobs, ref_logprobs)
        ctl = self.kl_ctl
        loss_cfg = self.cfg["loss"]
        scale = loss_cfg["scale"]
        if warmup < self.cfg["warmup"]:
            return scores
        if loss_cfg.get("clip", False):
            kl = max(kl, 0.0)
        return scores - ctl.value * kl * scale

    def _kl(self, logprob, ref_logprob):
        if self.config.kl_penalty == "abs":
            return abs(logprob - ref_logprob)
        return logprob - ref_logprob
'''
    reads = body_reads(source, "KLReward.reward", ["scores", "logprobs", "ref_logprobs", "warmup"])
    # the alias `ctl` is read as the path it names; the helper's read of self.config counts as the body's
    # an alias of an alias (`scale` of `loss_cfg`) too; a key read with a default is a path where it is read
    assert reads.paths == ['self.cfg["warmup"]', 'self.cfg["loss"]["clip"]', "self.kl_ctl.value",
                           'self.cfg["loss"]["scale"]', "self.config.kl_penalty"]
    assert reads.literals == {"self.config.kl_penalty": ["abs"]}
    assert reads.bounds["warmup"] == ['self.cfg["warmup"]']
    # a key read with a default, which the recorded dict may lack; a guard, which says a bound may bind
    assert reads.gets == {'self.cfg["loss"]["clip"]': False}
    assert reads.guarded
    assert not body_reads("def f(x, masks):\n    return x[masks > 0].sum()\n", "f", ["x", "masks"]).guarded
    # a local compared with a number: what it depends on is tried far on both sides; an infinite bound as such
    clip = body_reads('def f(g, m, p):\n    if p == float("inf"):\n        return g\n    c = m / abs(g)\n'
                      '    return g * c if c < 1.0 else g\n', "f", ["g", "m", "p"])
    assert clip.scaled == ["g", "m"] and clip.bounds["p"] == ["inf"]


def test_a_nested_config_value_is_varied_and_named(focal):
    task, result = focal
    summary = "\n".join(result.summary)
    assert "self.cfg.loss.gamma was always 2.0 in the recording; added" in summary
    assert "self.cfg.loss.alpha was always 0.25 in the recording; added" in summary
    # the mutants side reads every leaf of the recorded calls by its path
    out = result.data_dir
    index = RecordingIndex.model_validate_json((out / "index.json").read_text())
    assert any(c.amplified.startswith("self.cfg.loss.gamma=") for c in index.cases)


def test_leaf_values_of_the_recorded_calls(focal):
    _, result = focal
    leaves = leaf_values(sorted(result.data_dir.glob("case_*.npz")))
    assert leaves["self.cfg.loss.gamma"][0] == 2.0 and leaves["self.cfg.name"] == ["focal"]
    assert len(leaves["self.cfg.loss.gamma"]) > 1  # the added cases vary it


def test_a_focal_loss_that_pins_the_nested_gamma_fails(focal, local, tmp_path):
    task, _ = focal
    assert grade(local, task, tmp_path, "model/focal.py", FOCAL_HEAD + FOCAL_PINNED) is TestStatus.FAILED


def test_a_focal_loss_in_another_style_passes(focal, local, tmp_path):
    task, _ = focal
    assert grade(local, task, tmp_path, "model/focal.py", FOCAL_HEAD + FOCAL_RIGHT) is TestStatus.PASSED


SCHEDULE = '''
    import math


    def lr_at(step, base_lr=0.001, warmup_steps=20, total_steps=200, min_lr=1e-05):
        """Linear warmup over warmup_steps, then cosine decay to min_lr at total_steps."""
        if step < warmup_steps:
            return base_lr * (step + 1) / warmup_steps
        progress = (step - warmup_steps) / max(1, total_steps - warmup_steps)
        return min_lr + 0.5 * (base_lr - min_lr) * (1.0 + math.cos(math.pi * progress))
'''
SCHEDULE_FROM_ZERO = SCHEDULE.replace("(step - warmup_steps) / max(1, total_steps - warmup_steps)",
                                      "step / total_steps")
SCHEDULE_DRIVER = '''
    from model.schedule import lr_at

    print(sum(lr_at(step) for step in range(200)))
'''


def test_a_schedule_keeps_calls_from_its_decay_phase(tmp_path, local):
    task = make_task(tmp_path, "model/schedule.py::lr_at",
                     extra={"model/schedule.py": SCHEDULE, "run.py": SCHEDULE_DRIVER})
    result = record_tests(task, 1, "python run.py", sandbox=local)
    index = RecordingIndex.model_validate_json((result.data_dir / "index.json").read_text())
    recorded_steps = [int(c.arguments["step"]) for c in index.cases if not c.amplified]
    assert any(step >= 20 for step in recorded_steps), recorded_steps
    assert max(recorded_steps) > 100  # sampled across the run, not only its first calls
    folder = tmp_path / "wrong"
    source = SCHEDULE_FROM_ZERO.replace("\n    ", "\n").lstrip()
    assert grade(local, task, folder, "model/schedule.py", source) is TestStatus.FAILED


GUARD = '''
    import numpy as np


    def positive_mean(losses, labels):
        """Mean loss over the entries whose label is positive; 0.0 when there is none."""
        positive = labels > 0
        count = positive.sum()
        if count == 0:
            return 0.0
        return float((losses * positive).sum() / count)
'''
GUARD_DRIVER = '''
    import numpy as np

    from model.guard import positive_mean

    rng = np.random.default_rng(1)
    for _ in range(3):
        labels = rng.integers(0, 3, size=8)
        labels[0] = 1
        print(positive_mean(rng.random(8), labels))
'''
GUARD_DROPPED = '''import numpy as np


def positive_mean(losses, labels):
    positive = labels > 0
    return float((losses * positive).sum() / positive.sum())
'''


def test_a_guard_the_driver_never_trips_gets_the_case_where_it_binds(tmp_path, local):
    """The guard says the function takes labels with no positive: that input is kept as a case (the scan makes it
    whatever mutants live), so the guard's branch is killed and an answer without the guard fails."""
    task = make_task(tmp_path, "model/guard.py::positive_mean",
                     extra={"model/guard.py": GUARD, "run.py": GUARD_DRIVER})
    result = record_tests(task, 1, "python run.py", sandbox=local)
    summary = "\n".join(result.summary)
    assert "int, bool and 0/1 arrays all zero" in summary, summary
    index = RecordingIndex.model_validate_json((result.data_dir / "index.json").read_text())
    assert any(m.kind == "drop_branch" and m.killed for m in index.mutants)
    assert grade(local, task, tmp_path / "wrong", "model/guard.py", GUARD_DROPPED) is TestStatus.FAILED


OVERLAP = '''
    import numpy as np


    def overlap_ratio(probs, target):
        """Twice the overlap of ``probs`` and ``target`` (soft or one-hot) over the sum of their squares."""
        return float(2.0 * (probs * target).sum() / ((probs ** 2).sum() + (target ** 2).sum()))
'''
OVERLAP_DRIVER = '''
    import numpy as np

    from model.overlap import overlap_ratio

    rng = np.random.default_rng(2)
    for _ in range(3):
        probs = rng.dirichlet(np.ones(3), size=5)
        print(overlap_ratio(probs, np.eye(3)[rng.integers(0, 3, size=5)]))
'''


def test_a_mistake_only_soft_values_show_is_named_live_and_makes_no_case(tmp_path, local):
    from lmrbench.benchmark.validation.weakness import recorded_reasons

    task = make_task(tmp_path, "model/overlap.py::overlap_ratio",
                     extra={"model/overlap.py": OVERLAP, "run.py": OVERLAP_DRIVER})
    result = record_tests(task, 1, "python run.py", sandbox=local)
    index = RecordingIndex.model_validate_json((result.data_dir / "index.json").read_text())
    [target] = [m for m in index.mutants if m.kind == "drop_power" and "target" in m.description]
    assert target.search is not None and target.search.outcome == "live", target  # not "equivalent"
    assert "between 0 and 1" in target.search.outside
    [reason] = [r for r in recorded_reasons(index.mutants, index.unvaried, index.pins) if "drop the power" in r]
    assert "target holds values other than 0, 1 and -1" in reason and "no recorded call passes" in reason
    for case in result.data_dir.glob("*.npz"):  # the soft input named the mutant; it made no case
        loaded = lv.load_case(case)
        assert set(np.unique(loaded.argument("target")).tolist()) <= {0.0, 1.0}, case.name


TOP_P = '''
    import numpy as np


    def top_p_filter(logits, top_p=0.9):
        """Keep the smallest set of highest logits whose probability reaches top_p; the rest become -inf."""
        order = np.argsort(-logits, kind="stable")
        ranked = logits[order]
        probs = np.exp(ranked - ranked.max())
        probs = probs / probs.sum()
        before = np.cumsum(probs) - probs
        out = np.full_like(logits, -np.inf)
        keep = order[before < top_p]
        out[keep] = logits[keep]
        return out
'''
TOP_P_ASCENDING = '''import numpy as np


def top_p_filter(logits, top_p=0.9):
    order = np.argsort(logits, kind="stable")
    ranked = logits[order]
    probs = np.exp(ranked - ranked.max())
    probs = probs / probs.sum()
    cum = np.cumsum(probs)
    drop = order[cum <= 1 - top_p]
    out = logits.copy()
    out[drop] = -np.inf
    return out
'''
TOP_P_DRIVER = '''
    import numpy as np

    from model.nucleus import top_p_filter

    print(top_p_filter(np.array([2.0, 1.0, 1.0, 1.0, 0.5, 0.5]), 0.9))
    print(top_p_filter(np.array([3.0, 1.0, 0.25, 0.25, 0.25, -1.0]), 0.9))
'''


def _top_p_case(logits: list[float], top_p: float) -> tuple[dict, dict]:
    enc = lv.Encoder("in")
    node = enc.encode(np.array(logits), "logits")
    return ({"arguments": [{"name": "logits", "kind": "positional_or_keyword", "value": node},
                           {"name": "top_p", "kind": "positional_or_keyword", "value": top_p}],
             "self": None, "expected": None, "changed": {}, "self_after": None, "random_state": None}, enc.arrays)


def test_an_input_whose_result_a_tie_decides_is_no_case():
    namespace: dict = {}
    exec(textwrap.dedent(TOP_P), namespace)
    golden = search.Target(namespace["top_p_filter"], None, "function", None, 5.0,
                           {"kind": "numeric", "tolerance": "dtype"})
    for logits, why in (([1.5] * 6, "breaking a tie among equal inputs"), ([2.0, 1.0, 0.5, 0.25, 0.0, -1.0], "")):
        result, case, arrays, _ = search.golden_case(golden, *_top_p_case(logits, 0.5))
        assert search.unstable(golden, case, arrays, result, lv.Case(case, arrays)) == why
    # all-equal logits are a tie; a mask of zeros (a count made zero) is not
    assert search.untied(np.full(4, 1.5), True) is not None
    assert search.untied(np.zeros(4), True) is None


def test_a_guarded_body_is_searched_where_its_guard_binds():
    case, arrays = _top_p_case([2.0, 1.0, 0.5], 0.5)
    mask = lv.Encoder("in")
    case["arguments"].append({"name": "mask", "kind": "positional_or_keyword",
                              "value": mask.encode(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), "mask")})
    arrays = {**arrays, **{f"m{k}": v for k, v in mask.arrays.items()}}
    case["arguments"][-1]["value"]["key"] = "m" + case["arguments"][-1]["value"]["key"]
    assert variations.arrays_filled(case, arrays, "zeros", guarded=False) == {}  # no guard: float arrays stay
    filled = variations.arrays_filled(case, arrays, "zeros", guarded=True)
    logits, zeros = filled[search.array_key(case, "logits", arrays)], filled[search.array_key(case, "mask", arrays)]
    assert logits.tolist() == [0.0, 1.0, 0.5] and not zeros.any()  # a row of zeros; a mask all zero
    same = variations.arrays_filled(case, arrays, "same", guarded=True)[search.array_key(case, "logits", arrays)]
    assert same.tolist() == [2.0, 2.0, 2.0]  # a spread of zero


def test_padding_moves_to_the_other_end_and_floats_go_far_from_zero():
    case, arrays = _top_p_case([2.0, 1.0, 0.5], 0.5)
    mask = lv.Encoder("in")
    case["arguments"].append({"name": "mask", "kind": "positional_or_keyword",
                              "value": mask.encode(np.array([[1, 1, 0], [1, 0, 0]]), "mask")})
    arrays = {**arrays, **{f"m{k}": v for k, v in mask.arrays.items()}}
    case["arguments"][-1]["value"]["key"] = "m" + case["arguments"][-1]["value"]["key"]
    flipped = variations.arrays_filled(case, arrays, "flipped", guarded=False)
    assert list(flipped) == [search.array_key(case, "mask", arrays)]  # float logits are no mask: they stay
    assert flipped[search.array_key(case, "mask", arrays)].tolist() == [[0, 1, 1], [0, 0, 1]]  # left-padded now
    shifted = variations.arrays_filled(case, arrays, "shifted", guarded=False)
    assert shifted[search.array_key(case, "logits", arrays)].tolist() == [2002.0, 2001.0, 2000.5]


REFUSES = '''
import numpy as np


def pooled(x, how="mean"):
    if how == "mean":
        return x.mean()
    raise ValueError(how)


def reshaped(x, n):
    return x.reshape(n, -1)
'''


def test_only_a_raise_statement_of_the_goal_file_makes_a_case_that_expects_it():
    import linecache

    import lmrbench_checkers as lc
    import lmrbench_raising as raising

    linecache.cache["refuses.py"] = (len(REFUSES), None, REFUSES.splitlines(True), "refuses.py")  # as if on disk
    namespace: dict = {}
    exec(compile(REFUSES, "refuses.py", "exec"), namespace)
    for func, args, want in ((namespace["pooled"], (np.ones(3), "max"), "ValueError"),
                             (namespace["reshaped"], (np.ones(3), 2), "")):  # numpy refuses: no case
        with pytest.raises(ValueError) as caught:
            func(*args)
        assert raising.deliberate(caught.value, func) == want
    case, arrays = raising.raising_case(*_top_p_case([1.0, 2.0], 0.5), "ValueError")
    decoded = lv.Case(case, arrays)
    assert decoded.raises == "ValueError" and raising.raised_as(KeyError("x"), decoded) is False
    with lc.assert_raises("ValueError"):
        raise ValueError("refused")
    with pytest.raises(AssertionError, match="returned"), lc.assert_raises("ValueError"):
        pass


def test_arrays_changed_in_place_inside_a_container_are_compared_by_identity():
    enc, out = lv.Encoder("in"), lv.Encoder("out")
    teacher = {"w": np.zeros(2)}
    node = enc.encode(teacher, "teacher")
    assert [p for p, _ in lv.held_arrays(teacher, ["teacher"])] == [["teacher", "w"]]
    case = {"arguments": [{"name": "teacher", "kind": "positional_or_keyword", "value": node}], "self": None,
            "expected": None, "changed": {"teacher": out.encode({"w": np.ones(2)}, "teacher")}, "self_after": None,
            "random_state": None, "held": [{"path": ["teacher", "w"], "value": out.encode(np.ones(2), "w")}]}
    arrays = {**enc.arrays, **out.arrays}
    checker = {"kind": "numeric", "tolerance": "dtype"}
    for body, same in (("t['w'] += 1.0", True), ("t['w'] = t['w'] + 1.0", False)):  # in place; replaced
        namespace: dict = {}
        exec(f"def update(teacher):\n    t = teacher\n    {body}\n", namespace)
        target = search.Target(namespace["update"], None, "function", None, 5.0, checker)
        assert lv.held_label(["teacher", "w"]) == 'teacher["w"]'
        assert target.differs(case, arrays) is not same


def test_an_input_that_leaves_the_domain_of_the_recorded_arrays_makes_no_case_and_random_ones_keep_to_it():
    probs = np.array([[0.7, 0.2, 0.1], [0.25, 0.25, 0.5]])
    onehot, weights = np.eye(3)[[0, 2]], np.array([0.5, 2.0, 3.0])
    assert variations.domain(probs) == ["rows that sum to 1"]
    assert variations.domain(onehot) == ["0s and 1s", "rows that sum to 1"] and variations.domain(weights) == []
    assert variations.domain(np.zeros((2, 3))) == []  # all zeros: the first logits of a run, no mask
    enc = lv.Encoder("in")
    case = {"arguments": [{"name": n, "kind": "positional_or_keyword", "value": enc.encode(v, n)}
                          for n, v in (("probs", probs), ("target", onehot), ("weights", weights))]}
    arrays = enc.arrays
    key = {n: search.array_key(case, n, arrays) for n in ("probs", "target", "weights")}
    corners = np.random.default_rng(1).uniform(0, 9, size=(6, 2))
    boxes = np.concatenate([corners, corners + 1.0], axis=1)
    assert variations.domain(boxes) == [] and variations.ordered_columns(boxes) == [(0, 2), (1, 3)]
    drawn = variations._drawn(np.random.default_rng(2), boxes, 10.0)
    assert (drawn[:, 2] >= drawn[:, 0]).all() and (drawn[:, 3] >= drawn[:, 1]).all()  # random boxes stay boxes
    zero_row = {**arrays, key["probs"]: np.vstack([np.zeros(3), probs[1]])}
    assert variations.departs(case, arrays, zero_row) == "probs without its rows that sum to 1"
    soft = {**arrays, key["target"]: np.full((2, 3), 0.5)}
    assert variations.departs(case, arrays, soft) == "target without its 0s and 1s"
    assert variations.departs(case, arrays, {**arrays, key["weights"]: weights * 7}) == ""
    for seed in range(3):
        drawn = variations._random_arrays(case, arrays, seed)
        assert variations.departs(case, arrays, {**arrays, **drawn}) == "", seed
        assert not np.array_equal(drawn[key["probs"]], probs)


def test_an_optional_array_is_given_one_entry_per_row_first_and_never_in_a_shape_that_changes_the_result():
    enc = lv.Encoder("in")
    case = {"arguments": [{"name": "pred", "kind": "positional_or_keyword", "value": enc.encode(np.ones((5, 4)), "p")},
                          {"name": "weights", "kind": "positional_or_keyword", "value": None}], "expected": 1.0}
    assert variations.unset(case)[0] == ("weights", "rows")
    new, arrays = variations.build({"base": "b", "fill": "weights", "like": "rows", "with": "ones"}, case, enc.arrays)
    assert lv.Case(new, arrays).argument("weights").shape == (5,)
    assert search.shapes((np.zeros((5, 5)), 1.0)) != search.shapes((np.zeros(5), 1.0))


def test_two_slots_of_the_state_that_are_one_array_are_an_alias():
    class Opt:
        pass

    shared, other = np.zeros(3), np.zeros(3)
    aliased, apart = Opt(), Opt()
    aliased.state = {"sq": shared, "max_sq": shared}
    apart.state = {"sq": shared, "max_sq": other}
    assert lv.shared_memory(vars(aliased), {}) == ['self.state["sq"] ~ self.state["max_sq"]']
    assert lv.shared_memory(vars(apart), {}) == []


def test_arrays_an_inner_dataclass_holds_are_compared_by_identity_through_its_attributes():
    from dataclasses import dataclass

    @dataclass
    class Inner:
        params: list
        lr: float = 0.5

    enc, out = lv.Encoder("in"), lv.Encoder("out")
    inner = Inner([np.zeros(2)])
    assert [p for p, _ in lv.held_arrays(inner, ["wrapper"])] == [["wrapper", ".params", 0]]
    assert lv.held_label(["self", "optimizer", ".params", 0]) == "self.optimizer.params[0]"
    node = enc.encode(inner, "wrapper")
    case = {"arguments": [{"name": "wrapper", "kind": "positional_or_keyword", "value": node}], "self": None,
            "expected": None, "changed": {}, "self_after": None, "random_state": None,
            "held": [{"path": ["wrapper", ".params", 0], "value": out.encode(np.full(2, -0.5), "p")}]}
    arrays = {**enc.arrays, **out.arrays}
    checker = {"kind": "numeric", "tolerance": "dtype"}
    for body, same in (("p -= w.lr", True), ("w.params[0] = p - w.lr", False)):  # in place; replaced
        namespace: dict = {}
        exec(f"def step(wrapper):\n    w = wrapper\n    p = w.params[0]\n    {body}\n", namespace)
        target = search.Target(namespace["step"], None, "function", None, 5.0, checker)
        assert target.differs(case, arrays) is not same, body


def test_a_tie_made_by_amplification_does_not_fail_a_correct_answer(tmp_path, local):
    task = make_task(tmp_path, "model/nucleus.py::top_p_filter",
                     extra={"model/nucleus.py": TOP_P, "run.py": TOP_P_DRIVER})
    result = record_tests(task, 1, "python run.py", sandbox=local)
    assert any(c.amplified for c in result.cases)  # top_p is varied where no tie decides the result
    assert grade(local, task, tmp_path / "right", "model/nucleus.py", TOP_P_ASCENDING) is TestStatus.PASSED


NOISY_PICK = '''
    import numpy as np


    def noisy_pick(logits, gumbel):
        """The one-hot of each row's argmax of ``logits + gumbel``."""
        return np.eye(logits.shape[-1])[(logits + gumbel).argmax(axis=-1)]
'''
NOISY_PICK_DRIVER = '''
    import numpy as np

    from model.pick import noisy_pick

    rng = np.random.default_rng(3)
    logits = np.zeros((6, 4))
    print(noisy_pick(logits, rng.gumbel(size=logits.shape)).sum(axis=0))
'''
CLEAN_PICK = '''import numpy as np


def noisy_pick(logits, gumbel):
    return np.eye(logits.shape[-1])[logits.argmax(axis=-1)]
'''


def test_a_tie_the_golden_result_does_not_depend_on_excuses_nothing(tmp_path, local):
    """The driver's first logits are all zero, a tie; the golden argmax is over logits plus noise, which has none,
    so an answer that drops the noise (the argmax of the tied logits) fails instead of passing as a tie broken
    otherwise."""
    task = make_task(tmp_path, "model/pick.py::noisy_pick",
                     extra={"model/pick.py": NOISY_PICK, "run.py": NOISY_PICK_DRIVER})
    result = record_tests(task, 1, "python run.py", sandbox=local)
    recorded = [lv.load_case(result.data_dir / c.file) for c in result.cases if not c.amplified]
    assert recorded and all(np.all(c.argument("logits") == 0) for c in recorded)
    assert all(c.data["ties_settled"] == ["logits"] for c in recorded)  # logits tie; the result does not care
    assert grade(local, task, tmp_path / "wrong", "model/pick.py", CLEAN_PICK) is TestStatus.FAILED
    right = NOISY_PICK.replace("(logits + gumbel).argmax(axis=-1)", "np.argmax(gumbel + logits, axis=1)")
    assert grade(local, task, tmp_path / "right", "model/pick.py", textwrap.dedent(right)) is TestStatus.PASSED


MOMENTUM = '''
    import numpy as np


    class Momentum:
        def __init__(self, lr=0.1, beta=0.9):
            self.lr = lr
            self.beta = beta
            self.velocity = None
            self.steps = 0

        def step(self, params, grads):
            """Heavy-ball update of params in place: velocity = beta * velocity + grads; params -= lr * velocity."""
            if self.velocity is None:
                self.velocity = np.zeros_like(params)
            self.velocity = self.beta * self.velocity + grads
            params -= self.lr * self.velocity
            self.steps += 1
'''
MOMENTUM_DRIVER = '''
    import numpy as np

    from model.momentum import Momentum

    rng = np.random.default_rng(2)
    params = rng.normal(size=4)
    opt = Momentum()
    for _ in range(4):
        opt.step(params, 2 * params)
    print(params)
'''
MOMENTUM_PINNED = '''import numpy as np


class Momentum:
    def __init__(self, lr=0.1, beta=0.9):
        self.lr = lr
        self.beta = beta
        self.velocity = None
        self.steps = 0

    def step(self, params, grads):
        if self.velocity is None:
            self.velocity = np.zeros_like(params)
        self.velocity = 0.9 * self.velocity + grads
        params -= self.lr * self.velocity
        self.steps += 1
'''


def test_a_call_that_changes_self_is_amplified_from_the_state_before_it(tmp_path, local):
    task = make_task(tmp_path, "model/momentum.py::Momentum.step",
                     extra={"model/momentum.py": MOMENTUM, "run.py": MOMENTUM_DRIVER})
    result = record_tests(task, 1, "python run.py", sandbox=local)
    summary = "\n".join(result.summary)
    assert "self.beta was always 0.9 in the recording; added" in summary, summary
    assert grade(local, task, tmp_path / "wrong", "model/momentum.py", MOMENTUM_PINNED) is TestStatus.FAILED


EMA = '''import numpy as np


class WeightEMA:
    def __init__(self, decay=0.99):
        self.decay = decay
        self.shadow = {}

    def update(self, params):
        for name, value in params.items():
            if name in self.shadow:
                self.shadow[name] -= (1.0 - self.decay) * (self.shadow[name] - value)
            else:
                self.shadow[name] = value.copy()
'''
EMA_FUNCTIONAL = EMA.replace("self.shadow[name] -= (1.0 - self.decay) * (self.shadow[name] - value)",
                             "self.shadow[name] = self.decay * self.shadow[name] + (1 - self.decay) * value")
EMA_DRIVER = '''import numpy as np

from model.ema import WeightEMA

rng = np.random.default_rng(0)
params = {"w": rng.normal(size=(3, 2)), "b": np.zeros(2)}
ema = WeightEMA()
for step in range(4):
    params["w"] -= 0.1 * rng.normal(size=(3, 2))
    ema.update(params)
print(ema.shadow["w"].sum())
'''
SGD = '''import numpy as np


class SGD:
    def __init__(self, params, lr=0.1):
        self.params = params
        self.lr = lr

    def step(self, grads):
        for p, g in zip(self.params, grads):
            p -= self.lr * g
'''
SGD_REPLACES = SGD.replace('''        for p, g in zip(self.params, grads):
            p -= self.lr * g''', '''        for i, g in enumerate(grads):
            self.params[i] = self.params[i] - self.lr * g''')
SGD_DRIVER = '''import numpy as np

from model.sgd import SGD


class Linear:
    def __init__(self, rng):
        self.w = rng.normal(size=(3, 2))
        self.b = np.zeros(2)


rng = np.random.default_rng(0)
layer = Linear(rng)
opt = SGD([layer.w, layer.b])
for step in range(4):
    x = rng.normal(size=(5, 3))
    err = x @ layer.w + layer.b - 1.0
    opt.step([x.T @ err / 5, err.mean(axis=0)])
print(layer.w.sum())
'''


SGD_INDEXED = SGD.replace('''        for p, g in zip(self.params, grads):
            p -= self.lr * g''', '''        for i, g in enumerate(grads):
            self.params[i] -= self.lr * g''')


def test_state_only_the_object_holds_may_be_replaced_but_arrays_its_caller_holds_may_not(tmp_path, local):
    """An EMA that assigns new shadow arrays is right (only the EMA holds them); an optimiser that assigns new
    parameter arrays is wrong (the caller's layer holds the old ones, which stay untrained). The recording says
    which: its ``rebind`` mutant (a change in place made a new array) is killed for the optimiser, and live for the
    EMA, named with the array no test can check, so validate calls the task weak there."""
    from lmrbench.benchmark.validation.weakness import recorded_reasons

    ema = make_task(tmp_path / "ema", "model/ema.py::WeightEMA.update",
                    extra={"model/ema.py": EMA, "run.py": EMA_DRIVER})
    result = record_tests(ema, 1, "python run.py", sandbox=local)
    assert grade(local, ema, tmp_path / "ema-new", "model/ema.py", EMA_FUNCTIONAL) is TestStatus.PASSED
    index = RecordingIndex.model_validate_json((result.data_dir / "index.json").read_text())
    [rebind] = [m for m in index.mutants if m.kind == "rebind"]
    assert rebind.search is not None and rebind.search.outcome == "live", rebind  # not "equivalent"
    assert rebind.search.replaced in ('self.shadow["w"]', 'self.shadow["b"]')
    [reason] = [r for r in recorded_reasons(index.mutants, index.unvaried, index.pins) if "rebind" in r]
    assert f"changes {rebind.search.replaced} in place, and nothing else the recorded program holds it" in reason
    sgd = make_task(tmp_path / "sgd", "model/sgd.py::SGD.step",
                    extra={"model/sgd.py": SGD_INDEXED, "run.py": SGD_DRIVER})
    result = record_tests(sgd, 1, "python run.py", sandbox=local)
    index = RecordingIndex.model_validate_json((result.data_dir / "index.json").read_text())
    assert [m.killed for m in index.mutants if m.kind == "rebind"] == [True]
    assert grade(local, sgd, tmp_path / "sgd-new", "model/sgd.py", SGD_REPLACES) is TestStatus.FAILED
    assert grade(local, sgd, tmp_path / "sgd-same", "model/sgd.py", SGD) is TestStatus.PASSED
