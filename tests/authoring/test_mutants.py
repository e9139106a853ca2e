"""Mutants of a golden function."""

from __future__ import annotations

import ast

import numpy as np
import pytest

from lmrbench.authoring.mutants.mutants import MAX_MUTANTS, generate_mutants, sample_mutants
from lmrbench.errors import LmrError

SOURCE = '''import numpy as np

SCALE = 2  # not part of the function: never mutated (1 + 1)


class DPOLoss:
    def forward(self, pi, ref, beta=0.1):
        """The loss: 1 - 2."""
        z = beta * (pi - ref)
        z -= 1
        best = max(z[0], z[-1], z[1:n])
        if z.sum() > 0:
            return -np.log(z[:, 0])
        return np.log1p(np.exp(-z)).mean() + best


def other(a, b):
    return a + b
'''


def mutant_of(mutants, kind, needle=""):
    return next(mu for mu in mutants if mu.kind == kind and needle in mu.description)


def test_each_kind_changes_the_body_as_described():
    mutants = generate_mutants(SOURCE, "DPOLoss.forward", file="loss.py", limit=100)
    body = SOURCE[SOURCE.index("        z = beta") : SOURCE.index("\n\n\ndef other")]
    assert mutant_of(mutants, "constant_return", "None").source == SOURCE.replace(body, "        return None")
    assert mutant_of(mutants, "constant_return", "zeros_like").source.count("return np.zeros_like(pi)") == 1
    assert mutant_of(mutants, "return_input", "ref").source.count("        return ref\n") == 1
    assert "        z = beta * (pi)\n" in mutant_of(mutants, "drop_offset", "drop 'ref'").source
    assert "        z = beta * (ref)\n" in mutant_of(mutants, "drop_offset", "drop 'pi'").source
    assert "        return best\n" in mutant_of(mutants, "drop_term", "drop 'np.log1p").source
    assert "        z = beta * (pi + ref)\n" in mutant_of(mutants, "flip_sign", "flip + and -").source
    assert "        z += 1\n" in mutant_of(mutants, "flip_sign", "+=").source
    assert "return np.log(z[:, 0])" in mutant_of(mutants, "flip_sign", "drop the minus of '-np.log").source
    assert "z[1], z[-1]" in mutant_of(mutants, "off_by_one", "index 0 becomes 1").source
    assert "z[0], z[0]" in mutant_of(mutants, "off_by_one", "-1 becomes 0").source
    assert "z[2:n]" in mutant_of(mutants, "off_by_one", "lower bound").source
    assert "z[1:n + 1]" in mutant_of(mutants, "off_by_one", "upper bound").source
    assert "best = min(z[0]" in mutant_of(mutants, "swap_min_max").source
    assert "if z.sum() >= 0:" in mutant_of(mutants, "compare").source
    assert "if z.mean() > 0:" in mutant_of(mutants, "swap_reduction", "z.sum()").source
    assert "np.log1p(np.exp(-z)).sum() + best" in mutant_of(mutants, "swap_reduction", ".mean()'").source
    assert mutant_of(mutants, "drop_offset").description.startswith("line 9: ")


def test_only_the_function_body_changes_and_every_mutant_parses_and_differs():
    mutants = generate_mutants(SOURCE, "DPOLoss.forward", limit=20)
    assert len(mutants) == 20 < MAX_MUTANTS
    head, tail = SOURCE.split('"""The loss: 1 - 2."""\n')[0], SOURCE.split("\n\n\ndef other")[1]
    sources = [mu.source for mu in mutants]
    assert len(set(sources)) == len(sources)
    for text in sources:
        assert text != SOURCE
        ast.parse(text)
        assert text.startswith(head + '"""The loss: 1 - 2."""\n')
        assert text.endswith("\n\n\ndef other" + tail)


def test_deterministic_and_kinds_take_turns():
    first = generate_mutants(SOURCE, "DPOLoss.forward")
    assert first == generate_mutants(SOURCE, "DPOLoss.forward")
    kinds = [mu.kind for mu in first[:8]]
    assert kinds == ["constant_return", "return_input", "drop_term", "flip_sign", "off_by_one",
                     "swap_min_max", "swap_reduction", "compare"]  # fmt: skip
    assert [mu.kind for mu in generate_mutants(SOURCE, "DPOLoss.forward", limit=3)] == kinds[:3]


def test_one_line_function_and_no_numpy():
    src = "def add(a, b): return a + b\n"
    mutants = generate_mutants(src, "add")
    texts = {mu.source for mu in mutants}
    assert texts == {
        "def add(a, b): return None\n",
        "def add(a, b): return 0\n",
        "def add(a, b): return a\n",
        "def add(a, b): return b\n",
        "def add(a, b): return a - b\n",
        "def add(a, b): return -(a + b)\n",
        "def add(a, b): return a + 2 * b\n",
    }


def test_function_without_anything_to_mutate_still_gets_constant_returns():
    mutants = generate_mutants("def f():\n    '''Doc.'''\n    print('hi')\n", "f")
    assert [mu.source for mu in mutants] == [
        "def f():\n    '''Doc.'''\n    return None\n",
        "def f():\n    '''Doc.'''\n    return 0\n",
    ]


def test_unknown_function_names_the_file():
    with pytest.raises(LmrError, match="^loss.py: no function 'forward'; did you mean 'DPOLoss.forward'"):
        generate_mutants(SOURCE, "forward", file="loss.py")


LOSS = '''import numpy as np


def smoothed_ce(logits, targets, epsilon=0.1, ignore_index=-100, reduce=True):
    """Doc."""
    valid = targets != ignore_index
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -np.take_along_axis(logp, targets[:, None], axis=-1)[:, 0]
    loss = (1.0 - epsilon) * nll + epsilon * -logp.mean(-1)
    loss = np.where(valid, loss, 0.0) * mask
    if reduce and not epsilon:
        return loss.sum() / valid.sum()
    else:
        loss = loss[valid]
    return loss
'''


def test_mistake_kinds_change_the_body_as_described():
    mutants = generate_mutants(LOSS, "smoothed_ce", pins={"epsilon": "0.2"}, limit=200)
    body = LOSS.split('"""Doc."""\n')[1]

    def changed(kind, needle, old, new):
        mu = mutant_of(mutants, kind, needle)
        assert mu.source.split('"""Doc."""\n')[1] == body.replace(old, new, 1), mu.description

    pinned = mutant_of(mutants, "pin_parameter", "epsilon to 0.2")
    assert pinned.description == "pin epsilon to 0.2 (its recorded value)" and pinned.pinned == "epsilon"
    assert '"""Doc."""\n    epsilon = 0.2\n    valid = ' in pinned.source
    assert "    epsilon = 0.1\n" in mutant_of(mutants, "pin_parameter", "epsilon to 0.1 (its default)").source
    assert "    ignore_index = -100\n" in mutant_of(mutants, "pin_parameter", "ignore_index").source
    changed("arith_swap", "'(1.0 - epsilon) * nll'", "(1.0 - epsilon) * nll", "(1.0 - epsilon) / nll")
    changed("negate", "!=", "targets != ignore_index", "targets == ignore_index")
    changed("negate", "and becomes or", "reduce and not epsilon", "reduce or not epsilon")
    changed("negate", "drop the not", "not epsilon", "epsilon")
    changed("drop_mask", "keep the value where true", "np.where(valid, loss, 0.0)", "loss")
    changed("drop_mask", "drop the mask 'mask'", "np.where(valid, loss, 0.0) * mask", "np.where(valid, loss, 0.0)")
    changed("drop_mask", "loss[valid]", "loss = loss[valid]", "loss = loss")
    changed("swap_args", "np.where", "np.where(valid, loss, 0.0)", "np.where(loss, valid, 0.0)")
    changed("scale_constant", "1.0 becomes 2.0", "(1.0 - epsilon)", "(2.0 - epsilon)")
    changed("scale_constant", "scale 'epsilon * -logp", "nll + epsilon * -logp.mean(-1)",
            "nll + 2 * (epsilon * -logp.mean(-1))")
    changed("swap_reduction", "mean becomes max", "-logp.mean(-1)", "-logp.max(-1)")
    changed("swap_reduction", "sum becomes max", "np.exp(logits).sum(", "np.exp(logits).max(")
    always_else = mutant_of(mutants, "drop_branch", "(always the else)")
    assert "    if reduce" not in always_else.source
    assert "\n    loss = loss[valid]\n    return loss\n" in always_else.source
    always_if = mutant_of(mutants, "drop_branch", "(always the if)")
    assert "loss[valid]" not in always_if.source and "\n    return loss.sum() / valid.sum()\n" in always_if.source
    assert not [mu for mu in mutants if mu.kind == "detach"]  # the recording saw no result requiring grad


def test_detach_only_where_the_recording_saw_requires_grad():
    src = "def loss(x, y):\n    return (x - y) ** 2, x\n"
    mutants = generate_mutants(src, "loss", grad=True, kinds=["detach"])
    assert [mu.source for mu in mutants] == [
        "def loss(x, y):\n    return ((x - y) ** 2).detach(), x\n",
        "def loss(x, y):\n    return (x - y) ** 2, x.detach()\n",
    ]
    assert generate_mutants(src, "loss", kinds=["detach"]) == []


def test_sampling_keeps_every_kind_and_is_deterministic():
    mutants = generate_mutants(LOSS, "smoothed_ce", pins={"epsilon": "0.2"}, limit=200)
    kinds = {mu.kind for mu in mutants}
    picked = sample_mutants(mutants, len(kinds))
    assert {mu.kind for mu in picked} == kinds
    assert picked == sample_mutants(mutants, len(kinds))
    assert [mutants.index(mu) for mu in picked] == sorted(mutants.index(mu) for mu in picked)
    assert sample_mutants(mutants, 0) == [] and sample_mutants(mutants[:3], 10) == mutants[:3]


def test_an_elif_chain_gets_its_other_mutants():
    """Flattening an ``elif`` branch in place is refused by libcst: that one mutant is left out, not the run."""
    source = '''def pick(mode, x, labels=None):
    if labels is not None and mode == "a":
        raise ValueError("both")
    elif labels is None:
        y = x * 2
    elif mode == "b":
        y = x + 1
    else:
        y = x - 1
    return y
'''
    mutants = generate_mutants(source, "pick", limit=100)
    assert len({mu.kind for mu in mutants}) >= 5 and all(ast.parse(mu.source) for mu in mutants)


FOCAL = '''import numpy as np


class FocalLoss:
    def _weight(self, p):
        return self.cfg.loss.alpha * p.transpose(1, 2)

    def forward(self, logits, targets, labels=None, warmup=10, step=0):
        """Doc."""
        gamma = self.cfg.loss.gamma
        num_fg = max((targets.max(axis=1) > 0).sum(), 1)
        p = np.clip(logits, 1e-6, 1.0)
        if labels is None:
            labels = targets
        if gamma >= 0:
            p = p ** gamma
        elif gamma < -1:
            p = -p
        if step < warmup:
            p = p * step / warmup
        progress = (step - warmup) / (self.cfg.total - warmup)
        loss = self._weight(p).sum(axis=1) + np.maximum(labels, self.cfg.eps)
        return loss.mean() / num_fg * progress
'''
NESTED = {"self.cfg.loss.gamma": [2.0], "self.cfg.loss.alpha": [np.float32(0.25)], "self.cfg.total": [200],
          "self.cfg.unread": [1.0]}


@pytest.fixture(scope="module")
def focal():
    return generate_mutants(FOCAL, "FocalLoss.forward", limit=300, nested=NESTED)


@pytest.mark.parametrize(("kind", "needle", "before", "after"), [
    ("pin_nested", "self.cfg.loss.gamma to 2.0", "gamma = self.cfg.loss.gamma", "gamma = 2.0"),
    ("pin_nested", "self.cfg.total to 200", "(self.cfg.total - warmup)", "(200 - warmup)"),
    ("drop_guard", "'1' of 'max(", "num_fg = max((targets.max(axis=1) > 0).sum(), 1)",
     "num_fg = (targets.max(axis=1) > 0).sum()"),
    ("drop_reduction", "'targets.max(axis=1)'", "(targets.max(axis=1) > 0)", "(targets > 0)"),
    ("drop_guard", "clamp 'np.clip", "p = np.clip(logits, 1e-6, 1.0)", "p = logits"),
    ("drop_guard", "'self.cfg.eps'", "+ np.maximum(labels, self.cfg.eps)", "+ labels"),
    ("default_path", "labels=None always taken", "if labels is None:\n            labels", "labels"),
    ("default_path", "labels=None never taken", "        if labels is None:\n            labels = targets\n", ""),
    ("force_branch", "`if gamma >= 0` always", "if gamma >= 0:", "if True:"),
    ("force_branch", "`if gamma >= 0` never", "if gamma >= 0:", "if False:"),
    ("force_branch", "`if gamma < -1` never", "elif gamma < -1:", "elif False:"),
    ("force_branch", "`if step < warmup` always", "if step < warmup:\n            p = p *", "p = p *"),
    ("drop_offset", "drop 'warmup' from '(step - warmup)'", "(step - warmup) /", "(step) /"),
    ("compare", "'< warmup'", "if step < warmup:", "if step <= warmup:"),
    ("change_axis", "axis 1 becomes 0 in 'self", ".sum(axis=1)", ".sum(axis=0)"),
])
def test_new_shapes_change_the_body_as_described(focal, kind, needle, before, after):
    body = FOCAL.split('"""Doc."""\n')[1]
    mutant = mutant_of(focal, kind, needle)
    assert mutant.source.split('"""Doc."""\n')[1] == body.replace(before, after, 1), mutant.description


def test_a_nested_value_read_by_a_helper_is_pinned_there(focal):
    mutant = mutant_of(focal, "pin_nested", "self.cfg.loss.alpha")
    assert mutant.description == "pin self.cfg.loss.alpha to 0.25 (its recorded value) in helper FocalLoss._weight"
    assert mutant.pinned == "self.cfg.loss.alpha"
    assert FOCAL.replace("return self.cfg.loss.alpha * p", "return 0.25 * p") == mutant.source
    assert not [mu for mu in focal if "self.cfg.unread" in mu.description]


def test_no_mutant_that_no_input_can_tell_or_that_a_kind_already_names(focal):
    assert not [mu for mu in focal if mu.kind == "swap_args" and "transpose" in mu.description]
    # `if labels is None` forced is the default path, not also a dropped branch or a forced one
    assert not [mu for mu in focal if mu.kind in ("drop_branch", "force_branch") and "labels" in mu.description]
    assert len({mu.source for mu in focal}) == len(focal)
    assert not [mu for mu in generate_mutants(FOCAL, "FocalLoss.forward", limit=300) if mu.kind == "pin_nested"]


def test_a_chain_read_further_or_assigned_is_not_pinned():
    source = '''def update(self, x):
    self.kl_ctl.value = x * self.kl_ctl.value.item() + self.kl_ctl.value
    return self.kl_ctl.value
'''
    [mutant] = generate_mutants(source, "update", nested={"self.kl_ctl.value": [0.1]}, kinds=["pin_nested"])
    assert mutant.source == source.replace("+ self.kl_ctl.value", "+ 0.1").replace("return self.kl_ctl.value",
                                                                                   "return 0.1")


@pytest.mark.parametrize(("kind", "needle", "hint"), [
    ("pin_nested", "self.cfg.loss.gamma", "a case with self.cfg.loss.gamma other than 2.0"),
    ("drop_guard", "'1' of 'max(", "a case where the guard '1' binds (a count of zero, a value past the bound)"),
    ("drop_guard", "np.clip", "a case with values outside the clamp's bounds"),
    ("default_path", "labels=None always", "a case that passes labels (not None)"),
    ("default_path", "labels=None never", "a case that leaves labels at its default None"),
    ("force_branch", "`if step < warmup` always", "a case where `step < warmup` does not hold"),
    ("force_branch", "`if gamma < -1` never", "a case where `gamma < -1` holds and changes the result"),
    ("drop_offset", "drop 'warmup' from '(step", "a case where 'warmup' is not zero and changes the result"),
    ("compare", "'< warmup'", "a case where both sides of '< warmup' are equal"),
    ("drop_reduction", "targets.max", "a case whose rows hold several entries that the reduction combines (not one "
     "per row)"),
])
def test_each_live_mistake_says_what_input_would_kill_it(focal, kind, needle, hint):
    from lmrbench.authoring.mutants.mutant_hints import kill_hint

    mutant = mutant_of(focal, kind, needle)
    assert kill_hint(mutant.kind, mutant.description) == hint


def test_a_copy_dropped_and_a_power_dropped():
    source = '''import copy

import numpy as np


class Keep:
    def push(self, frame, w, target):
        """Doc."""
        self.frames.append(frame.copy())
        self.first = np.array(w, copy=True)
        self.typed = np.array(w, dtype=np.float32)
        self.tree = copy.deepcopy(w)
        return (target ** 2).sum() + (w ** 1).sum()
'''
    mutants = generate_mutants(source, "Keep.push", kinds=["drop_copy", "drop_power"])
    changed = {mu.kind: [] for mu in mutants}
    for mu in mutants:
        [old] = [line for line in source.splitlines() if line not in mu.source.splitlines()]
        [new] = [line for line in mu.source.splitlines() if line not in source.splitlines()]
        changed[mu.kind].append((old.strip(), new.strip()))
    assert changed == {
        "drop_copy": [("self.frames.append(frame.copy())", "self.frames.append(frame)"),
                      ("self.first = np.array(w, copy=True)", "self.first = w"),
                      ("self.tree = copy.deepcopy(w)", "self.tree = w")],
        "drop_power": [("return (target ** 2).sum() + (w ** 1).sum()", "return target.sum() + (w ** 1).sum()")],
    }
    from lmrbench.authoring.mutants.mutant_hints import kill_hint

    power = next(mu for mu in mutants if mu.kind == "drop_power")
    assert kill_hint(power.kind, power.description) == \
        "a case where target holds values other than 0, 1 and -1 (soft values, not a mask or one-hot)"


def test_a_wrap_dropped_and_the_sign_of_zero_taken_as_plus_one():
    source = '''import numpy as np


class Ring:
    def add(self, rows, g):
        """Doc."""
        idx = (self.pos + np.arange(len(rows))) % len(self.data)
        label = "%d rows" % len(rows)
        odd = self.pos % 2
        return np.sign(g - 1) * idx, np.sign(g), label, odd
'''
    mutants = generate_mutants(source, "Ring.add", kinds=["drop_wrap", "sign_zero"])
    from lmrbench.authoring.mutants.mutant_hints import kill_hint

    changed = [(mu.kind, [line.strip() for line in mu.source.splitlines() if line not in source.splitlines()],
                kill_hint(mu.kind, mu.description)) for mu in mutants]
    assert changed == [
        ("drop_wrap", ["idx = (self.pos + np.arange(len(rows)))"],
         "a case where self.pos + np.arange(len(rows)) reaches past the end (it wraps round)"),
        ("sign_zero", ["return np.where((g - 1) >= 0, 1.0, -1.0) * idx, np.sign(g), label, odd"],
         "a case where g - 1 has entries that are exactly zero"),
        ("sign_zero", ["return np.sign(g - 1) * idx, np.where(g >= 0, 1.0, -1.0), label, odd"],
         "a case where g has entries that are exactly zero"),
    ]


def test_a_change_in_place_made_a_new_array():
    source = '''import numpy as np


class Power:
    def step(self, w, mask):
        """Doc."""
        self.calls += 1
        self.params["w"] *= mask
        self.u[...] = w @ self.v
        np.copyto(self.v, w.T @ self.u)
        self.m[:] = self.m - w
        local = w.copy()
        local[...] = 0.0
        return local
'''
    mutants = generate_mutants(source, "Power.step", kinds=["rebind"])
    from lmrbench.authoring.mutants.mutant_hints import kill_hint

    changed = [[line.strip() for line in mu.source.splitlines() if line not in source.splitlines()]
               for mu in mutants]
    assert changed == [['self.params["w"] = self.params["w"] * mask'], ["self.u = w @ self.v"],
                       ["self.v = w.T @ self.u"], ["self.m = self.m - w"]]  # not a count, not a local array
    assert "holds the array elsewhere too" in kill_hint("rebind", mutants[0].description)


def test_an_axis_never_moved_into_place_and_the_leaves_used_as_axes():
    source = '''import numpy as np


def spectral(w, u, dim=0, axis=-1):
    """Doc."""
    m = np.moveaxis(w, dim, 0).reshape(w.shape[dim], -1)
    t = w.swapaxes(0, 1)
    return (m @ u).sum(axis=axis), t
'''
    mutants = generate_mutants(source, "spectral", kinds=["drop_move"])
    changed = [[line.strip() for line in mu.source.splitlines() if line not in source.splitlines()]
               for mu in mutants]
    assert changed == [["m = w.reshape(w.shape[dim], -1)"], ["t = w"]]
    from lmrbench import pyparse
    from lmrbench.authoring.mutants.mutant_hints import kill_hint
    from lmrbench.authoring.record.body_forms import axis_leaves

    assert "arrays' axes moved to match" in kill_hint("drop_move", mutants[0].description)
    assert axis_leaves(pyparse.parse(source)) == ["dim", "axis"]  # not the literal 0 and 1


def test_a_get_taken_as_an_index():
    source = '''def pick(grads, cfg, name):
    """Doc."""
    g = grads.get(name)
    return g, cfg.get("beta", 0.5), cfg.get("gamma", default=1.0)
'''
    mutants = generate_mutants(source, "pick", kinds=["strict_get"])
    from lmrbench.authoring.mutants.mutant_hints import kill_hint

    changed = [[line.strip() for line in mu.source.splitlines() if line not in source.splitlines()]
               for mu in mutants]
    assert changed == [["g = grads[name]"]]  # not the settings read by a literal key
    assert kill_hint("strict_get", mutants[0].description) == "a case whose grads lacks the key it reads"


def test_a_check_for_none_dropped_from_a_condition():
    source = '''def weights(epoch, start=None, cap=None):
    """Doc."""
    if start is not None and epoch >= start:
        return 2.0
    if cap is None or epoch < cap:
        return 1.0
    return 0.0 if (epoch is None and cap) else 3.0
'''
    mutants = generate_mutants(source, "weights", kinds=["drop_none_check"])
    from lmrbench.authoring.mutants.mutant_hints import kill_hint

    changed = [[line.strip() for line in mu.source.splitlines() if line not in source.splitlines()]
               for mu in mutants]
    assert changed == [["if epoch >= start:"], ["if epoch < cap:"]]  # not ``epoch is None and cap``: no guard
    assert kill_hint("drop_none_check", mutants[0].description) == "a case where start is None"
