"""A numpy task of stateful research code: one implementation per way a call changes what its caller holds.

An optimiser shaped like ``torch.optim.Optimizer`` (param groups, a ``defaultdict`` of per-parameter state, the
parameters and gradient buffers the caller holds, updated in place over several steps), an in-place update of
arrays held in a list argument, one array passed in two places, a closure the goal function calls (which reads
what the function changed and writes what it reads next), and an object that keeps an argument for a later call.
Each test computes its expected values with a reference of its own, so the golden code passes in one process.
"""

from __future__ import annotations

from pathlib import Path

from helpers.tasks import Impl, write_task
from lmrbench.authoring.task.mask import mask_source

REPO = "stateful_repo"
GOAL = "stateful/mech.py"

MECH_PY = '''"""Stateful pieces of a numpy training loop."""

from collections import defaultdict

import numpy as np


class Lion:
    """The sign of an interpolated momentum with decoupled weight decay, over param groups."""

    def __init__(self, params, grads, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        self.defaults = {"lr": lr, "betas": betas, "weight_decay": weight_decay}
        self.state = defaultdict(dict)
        self.param_groups = []
        self.grads = grads
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for group in groups:
            self.param_groups.append({**self.defaults, **group, "params": list(group["params"])})

    def step(self, closure=None):
        """Update every parameter in place from the gradient buffer beside it; ``closure`` refills the buffers
        first and returns the loss."""
        loss = None
        if closure is not None:
            loss = closure()
        k = 0
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                grad = self.grads[k]
                state = self.state[k]
                if len(state) == 0:
                    state["exp_avg"] = np.zeros_like(p)
                exp_avg = state["exp_avg"]
                p *= 1 - group["lr"] * group["weight_decay"]
                p -= group["lr"] * np.sign(exp_avg * beta1 + grad * (1 - beta1))
                exp_avg *= beta2
                exp_avg += (1 - beta2) * grad
                k += 1
        return loss


def clip_grads_(grads, max_norm):
    """Scale every gradient in place so that their joint norm is at most ``max_norm``; the norm before."""
    norm = float(np.sqrt(sum(float(np.sum(g * g)) for g in grads)))
    if norm > max_norm:
        for g in grads:
            g *= max_norm / norm
    return norm


def ema_(avg, x, beta):
    """Move ``avg`` in place towards ``x``: first decay it, then add the new part."""
    avg *= beta
    avg += (1 - beta) * x


def sharp_loss(params, closure, rho):
    """The loss at the worst nearby point: step each parameter by ``rho`` along its sign, ask ``closure`` for the
    loss there, then step back."""
    deltas = [rho * np.sign(p) for p in params]
    for p, d in zip(params, deltas):
        p += d
    loss = closure()
    for p, d in zip(params, deltas):
        p -= d
    return loss


class Watcher:
    """Keeps the arrays it is shown and moves them all later."""

    def __init__(self):
        self.watched = []

    def watch(self, array):
        """Keep ``array``; give it back."""
        self.watched.append(array)
        return array

    def bump(self, by):
        """Add ``by`` to every kept array, in place."""
        for array in self.watched:
            array += by
'''

REFERENCE = '''
def reference_lion(params, grads_at, steps, lr, betas, weight_decay):
    """Lion written again, vectorised over one flat vector."""
    flat = np.concatenate([p.ravel() for p in params])
    m = np.zeros_like(flat)
    for _ in range(steps):
        g = np.concatenate([g.ravel() for g in grads_at(flat)])
        flat = flat * (1 - lr * weight_decay) - lr * np.sign(m * betas[0] + g * (1 - betas[0]))
        m = m * betas[1] + g * (1 - betas[1])
    return flat
'''

TEST_LION = '''import numpy as np

from stateful.mech import Lion
''' + REFERENCE + '''

def model(seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=2)]


def test_lion_updates_the_callers_parameters_over_steps():
    params, target = model(0), model(1)
    grads = [np.zeros_like(p) for p in params]
    opt = Lion([{"params": params[:2]}, {"params": params[2:], "lr": 0.05}], grads, lr=0.1, betas=(0.9, 0.99),
               weight_decay=0.1)
    start = [p.copy() for p in params]
    for _ in range(4):
        for g, p, t in zip(grads, params, target):
            g[...] = 2 * (p - t)
        opt.step()
    assert opt.state[0]["exp_avg"].shape == (3, 4) and len(opt.state) == 3
    assert opt.param_groups[0]["params"][0] is params[0]
    for k, (lr, first, last) in enumerate([(0.1, 0, 2), (0.05, 2, 3)]):
        group_start = start[first:last]
        def grads_at(flat, first=first, last=last):
            out, at = [], 0
            for p, t in zip(group_start, target[first:last]):
                out.append(2 * (flat[at:at + p.size].reshape(p.shape) - t))
                at += p.size
            return out
        want = reference_lion(group_start, grads_at, 4, lr, (0.9, 0.99), 0.1)
        got = np.concatenate([p.ravel() for p in params[first:last]])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
'''

TEST_CLOSURE = '''import numpy as np

from stateful.mech import Lion
''' + REFERENCE + '''

def test_the_closure_refills_the_gradients_the_step_reads():
    rng = np.random.default_rng(2)
    params, target = [rng.normal(size=5), rng.normal(size=(2, 2))], [rng.normal(size=5), rng.normal(size=(2, 2))]
    start = [p.copy() for p in params]
    grads = [np.zeros_like(p) for p in params]
    opt = Lion(params, grads, lr=0.1, betas=(0.9, 0.99), weight_decay=0.1)
    calls = []

    def closure():
        calls.append(1)
        for g, p, t in zip(grads, params, target):
            g[...] = 2 * (p - t)
        return float(sum(np.sum((p - t) ** 2) for p, t in zip(params, target)))

    losses = [opt.step(closure) for _ in range(3)]
    assert len(calls) == 3 and losses[0] > losses[-1]

    def grads_at(flat):
        return [2 * (flat[:5] - target[0]), 2 * (flat[5:].reshape(2, 2) - target[1])]

    want = reference_lion(start, grads_at, 3, 0.1, (0.9, 0.99), 0.1)
    np.testing.assert_allclose(np.concatenate([p.ravel() for p in params]), want, rtol=1e-12, atol=1e-12)


def test_the_closure_sees_what_the_function_changed_before_calling_it():
    from stateful.mech import sharp_loss

    params = [np.array([1.0, -2.0]), np.array([[0.5], [-0.25]])]
    seen = []

    def closure():
        seen.append([p.copy() for p in params])
        return float(sum(np.sum(p ** 2) for p in params))

    loss = sharp_loss(params, closure, 0.5)
    assert loss == (1.5 ** 2 + 2.5 ** 2 + 1.0 ** 2 + 0.75 ** 2)
    np.testing.assert_array_equal(seen[0][0], [1.5, -2.5])
    np.testing.assert_array_equal(params[0], [1.0, -2.0])
    np.testing.assert_array_equal(params[1], [[0.5], [-0.25]])
'''

TEST_INPLACE = '''import numpy as np

from stateful.mech import clip_grads_


def test_the_arrays_inside_a_list_argument_change_in_place():
    a, b = np.array([3.0, 0.0]), np.array([[0.0], [4.0]])
    grads = [a, b]
    norm = clip_grads_(grads, 1.0)
    assert norm == 5.0 and grads[0] is a and grads[1] is b
    np.testing.assert_allclose(a, [0.6, 0.0])
    np.testing.assert_allclose(b, [[0.0], [0.8]])


def test_an_argument_array_changes_in_place():
    g = np.array([6.0, 8.0])
    assert clip_grads_([g[:]], 5.0) == 10.0
    np.testing.assert_allclose(g, [3.0, 4.0])
'''

TEST_ALIAS = '''import numpy as np

from stateful.mech import ema_


def test_one_array_passed_in_two_places():
    v = np.array([4.0, -8.0])
    ema_(v, v, 0.5)  # the decay is seen through x too: 0.5 v + 0.5 (0.5 v)
    np.testing.assert_allclose(v, [3.0, -6.0])


def test_one_array_in_two_containers():
    v = np.array([2.0])
    state, history = {"avg": v}, [v]
    ema_(state["avg"], history[-1], 0.5)
    assert state["avg"] is history[0]
    np.testing.assert_allclose(v, [1.5])
'''

TEST_IDENTITY = '''import numpy as np

from stateful.mech import Watcher


def test_an_object_kept_by_one_call_is_changed_by_the_next():
    w = Watcher()
    x, y = np.zeros(2), np.ones(3)
    assert w.watch(x) is x
    w.watch(y)
    assert w.watched[0] is x and w.watched[1] is y
    w.bump(2.0)
    w.bump(1.0)
    np.testing.assert_array_equal(x, [3.0, 3.0])
    np.testing.assert_array_equal(y, [4.0, 4.0, 4.0])
'''

MECHANISMS = {
    "optimiser": (["Lion.step"], TEST_LION),
    "closure": (["Lion.step", "sharp_loss"], TEST_CLOSURE),
    "in-place": (["clip_grads_"], TEST_INPLACE),
    "alias": (["ema_"], TEST_ALIAS),
    "identity": (["Watcher.watch", "Watcher.bump"], TEST_IDENTITY),
}
"""Each mechanism: the goal functions of its implementation and its test file."""

WRONG = {
    "optimiser": ("p *= 1 - group[\"lr\"] * group[\"weight_decay\"]", "pass"),
    "closure": ("            loss = closure()", "            loss = None"),
    "in-place": ("g *= max_norm / norm", "g = g * (max_norm / norm)"),
    "alias": ("avg *= beta\n    avg += (1 - beta) * x", "avg[...] = beta * avg + (1 - beta) * x"),
    "identity": ("array += by", "array = array + by"),
}
"""A plausible wrong edit of the golden code per mechanism (weight decay dropped, the closure never called, a
copy updated instead of the caller's array, the update computed without the alias, a rebinding)."""


def write_stateful_task(bench: Path) -> Path:
    """The task folder ``bench/1-Stateful``: one implementation per mechanism, in ``MECHANISMS``' order."""
    impls, files, quals = [], {"stateful/__init__.py": "", "requirements.txt": "numpy\n"}, []
    for k, (name, (goals, test)) in enumerate(MECHANISMS.items(), start=1):
        files[f"unit_test/unit_test_{k}.py"] = test
        impls.append(Impl(goals[0], f"unit_test/unit_test_{k}.py", f"Implement {', '.join(goals)} ({name}).",
                          extra={"goal_function": goals}))
        quals.extend(goals)
    masked = mask_source(MECH_PY, sorted(set(quals)), file=GOAL)
    return write_task(bench, "1-Stateful", repo=REPO, goal_file=GOAL, goal=masked, golden=MECH_PY, impls=impls,
                      files=files, dockerfile=True)


def wrong_candidate(dest: Path, mechanism: str) -> Path:
    """A candidate folder holding the golden goal file with ``WRONG[mechanism]``'s edit."""
    return _edited(dest, GOAL, MECH_PY, WRONG[mechanism])


def _edited(dest: Path, goal: str, source: str, edit: tuple[str, str]) -> Path:
    """A candidate folder holding ``goal`` as ``source`` with ``edit`` (old, new; old occurs once) made."""
    old, new = edit
    assert source.count(old) == 1, old
    (dest / goal).parent.mkdir(parents=True)
    (dest / goal).write_text(source.replace(old, new))
    return dest


TORCH_REPO = "torch_repo"
TORCH_GOAL = "tstate/optim.py"
TORCH_PY = '''"""A sign-momentum optimiser and a statistics update, in torch."""

import torch
from torch.optim.optimizer import Optimizer


class SignMomentum(Optimizer):
    """Steps by the sign of a momentum interpolated with the gradient, with decoupled weight decay."""

    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, {"lr": lr, "betas": betas, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure=None):
        """One step of every parameter with a gradient; ``closure`` recomputes the loss and the gradients."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(p)
                m = state["exp_avg"]
                p.mul_(1 - group["lr"] * group["weight_decay"])
                p.add_(torch.sign(m * beta1 + p.grad * (1 - beta1)), alpha=-group["lr"])
                m.mul_(beta2).add_(p.grad, alpha=1 - beta2)
        return loss


def update_stats(norm, x):
    """Run a normalisation layer in training mode over ``x``: its running statistics move."""
    norm.train()
    return norm(x)
'''

TORCH_COMMON = '''import copy

import torch
from torch import nn

from tstate.optim import SignMomentum


DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def data():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2)).to(DEVICE)
    return model, torch.randn(16, 4, device=DEVICE), torch.randint(0, 2, (16,), device=DEVICE)


def reference(model, x, y, steps, lr, betas, wd):
    """The same training written again, with a momentum per parameter of our own."""
    model = copy.deepcopy(model)
    moms = [torch.zeros_like(p) for p in model.parameters()]
    for _ in range(steps):
        model.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        with torch.no_grad():
            for p, m in zip(model.parameters(), moms):
                p.mul_(1 - lr * wd)
                p.sub_(lr * torch.sign(m * betas[0] + p.grad * (1 - betas[0])))
                m.mul_(betas[1]).add_((1 - betas[1]) * p.grad)
    return model
'''

TEST_TORCH_OPTIM = TORCH_COMMON + '''

def test_the_optimiser_moves_the_models_own_parameters():
    model, x, y = data()
    want = reference(model, x, y, 5, 1e-2, (0.9, 0.99), 0.1)
    opt = SignMomentum(model.parameters(), lr=1e-2, betas=(0.9, 0.99), weight_decay=0.1)
    for _ in range(5):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    assert all(p in opt.state for p in model.parameters())
    assert opt.param_groups[0]["params"][0] is next(model.parameters())
    for got, ref in zip(model.parameters(), want.parameters()):
        torch.testing.assert_close(got, ref, rtol=0, atol=1e-6)
'''

TEST_TORCH_CLOSURE = TORCH_COMMON + '''

def test_the_closure_computes_the_gradients_the_step_reads():
    model, x, y = data()
    want = reference(model, x, y, 4, 1e-2, (0.9, 0.99), 0.1)
    opt = SignMomentum(model.parameters(), lr=1e-2, betas=(0.9, 0.99), weight_decay=0.1)

    def closure():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        return loss

    losses = [float(opt.step(closure)) for _ in range(4)]
    assert losses[-1] < losses[0]
    for got, ref in zip(model.parameters(), want.parameters()):
        torch.testing.assert_close(got, ref, rtol=0, atol=1e-6)
'''

TEST_TORCH_BUFFERS = '''import copy

import torch
from torch import nn

from tstate.optim import update_stats


def test_a_modules_buffers_move_in_place():
    torch.manual_seed(1)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    norm, x = nn.BatchNorm1d(3).to(device), torch.randn(8, 3, device=device) * 2 + 1
    twin = copy.deepcopy(norm)
    mean = norm.running_mean
    norm.eval()
    out = update_stats(norm, x)
    update_stats(norm, x + 1)
    twin.train()
    want = twin(x)
    twin(x + 1)
    assert norm.training and norm.running_mean is mean and int(norm.num_batches_tracked) == 2
    torch.testing.assert_close(norm.running_mean, twin.running_mean)
    torch.testing.assert_close(norm.running_var, twin.running_var)
    torch.testing.assert_close(out, want)
'''

TORCH_MECHANISMS = {
    "torch-optimiser": (["SignMomentum.step"], TEST_TORCH_OPTIM),
    "torch-closure": (["SignMomentum.step"], TEST_TORCH_CLOSURE),
    "torch-buffers": (["update_stats"], TEST_TORCH_BUFFERS),
}
"""The same mechanisms with torch: an ``Optimizer`` subclass over a model's parameters (state keyed by them,
gradients from ``backward``), its closure, and a module whose buffers a call moves."""

TORCH_WRONG = {
    "torch-optimiser": ('                p.mul_(1 - group["lr"] * group["weight_decay"])\n', ""),  # no weight decay
    "torch-closure": ("loss = closure()", "loss = None"),  # the closure's gradients never computed
    "torch-buffers": ("    norm.train()\n", ""),  # evaluation mode kept: the statistics never move
}
"""A plausible wrong edit of ``TORCH_PY`` per mechanism, which the mechanism's test must fail split."""


def torch_wrong_candidate(dest: Path, mechanism: str) -> Path:
    """A candidate folder holding the torch goal file with ``TORCH_WRONG[mechanism]``'s edit."""
    return _edited(dest, TORCH_GOAL, TORCH_PY, TORCH_WRONG[mechanism])


def write_torch_task(bench: Path) -> Path:
    """The task folder ``bench/2-TorchStateful`` (requirements: torch), one implementation per
    ``TORCH_MECHANISMS`` entry."""
    impls, files = [], {"tstate/__init__.py": "", "requirements.txt": "torch"}
    for k, (name, (goals, test)) in enumerate(TORCH_MECHANISMS.items(), start=1):
        files[f"unit_test/unit_test_{k}.py"] = test
        impls.append(Impl(goals[0], f"unit_test/unit_test_{k}.py", f"Implement {', '.join(goals)} ({name}).",
                          extra={"goal_function": goals}))
    masked = mask_source(TORCH_PY, ["SignMomentum.step", "update_stats"], file=TORCH_GOAL)
    return write_task(bench, "2-TorchStateful", repo=TORCH_REPO, goal_file=TORCH_GOAL, goal=masked, golden=TORCH_PY,
                      impls=impls, files=files, dockerfile=True)
