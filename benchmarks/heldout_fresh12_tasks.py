"""A thirteenth held-out set for ``wrong_answers.py --set fresh12``: four numpy tasks of shapes that no other set
nor any test fixture has. The first is V-trace (Espeholt et al. 2018, IMPALA): off-policy value targets and
policy-gradient advantages from the behaviour and target log-probabilities of the actions taken, time-major [T, B]
(or [T]) arrays, importance weights truncated at ``rho_bar`` for the temporal differences, at ``c_bar`` (times
``lambda_``) for the traces and at ``pg_rho_bar`` for the advantages, a threshold of None truncating nothing,
discounts zeroed at done flags, a bootstrap value, and the targets computed backwards over time; the driver trains
a tabular actor-critic on a chain with lagged actors, one call per learner step, on the default thresholds and
lambda. The second is the LAMB optimiser's step (You et al. 2019) as a method that reads ``self.defaults`` and
changes ``self.t``, its moment dicts and the named parameters in place: Adam moments with a bias-correction flag,
decoupled weight decay, exclusion patterns (searched in the names) for the weight decay and for the layer
adaptation, the latter falling back to the former, a trust ratio ``||w|| / ||update||`` guarded to 1 when either
norm is zero and optionally capped by ``max_trust_ratio``, and parameters without a gradient skipped; the driver
trains a two-layer classifier with BERT's exclusion list, one call per step, its biases excluded so that no zero
norm is ever seen. The third is the perplexity of a long token sequence by a sliding window: windows of
``max_length`` tokens (``model.config.n_positions`` by default) moved by ``stride``, the context tokens already
scored labelled -100, the shifted targets of each window scored by a model object's log-probabilities, the summed
NLL over the tokens scored, the last short window, a [1, n] batch, and checks of the stride and of the length; the
driver scores held-out text with character trigram models of three smoothing constants at the default stride. The
fourth is Soft-NMS (Bodla, Singh, Chellappa and Davis 2017): linear decay above an IoU threshold, gaussian decay
with ``sigma`` and hard NMS, a score threshold that drops boxes before and after each decay, boxes as [x1, y1, x2,
y2], the kept indices in order with their decayed scores; the driver runs it in its default linear mode on a toy
detector's raw boxes, one call per image, and scores the AP. Written before its first run, and kept out of tests/.

Each task has the keys of ``wrong_answer_tasks.py``: ``files``, ``function``, ``command``, ``head``, ``wrong``,
``right``, ``check`` and ``gaps``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
from corpus_edits import editor

# -- V-trace off-policy targets and advantages (Espeholt et al. 2018) --------------------------------------------

VT_SIG = ("def vtrace(behaviour_log_probs, target_log_probs, rewards, values, bootstrap_value, dones, gamma=0.99,\n"
          "           rho_bar=1.0, c_bar=1.0, pg_rho_bar=1.0, lambda_=1.0):\n")
VT_BODY = '''    log_rhos = (np.asarray(target_log_probs, dtype=np.float64)
                - np.asarray(behaviour_log_probs, dtype=np.float64))
    rhos = np.exp(log_rhos)
    rewards = np.asarray(rewards, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    bootstrap_value = np.asarray(bootstrap_value, dtype=np.float64)
    discounts = gamma * (1.0 - np.asarray(dones, dtype=np.float64))
    clipped_rhos = rhos if rho_bar is None else np.minimum(rho_bar, rhos)
    cs = lambda_ * (rhos if c_bar is None else np.minimum(c_bar, rhos))
    values_tp1 = np.concatenate([values[1:], bootstrap_value[None]], axis=0)
    deltas = clipped_rhos * (rewards + discounts * values_tp1 - values)
    vs_minus_v = np.zeros_like(values)
    acc = np.zeros_like(bootstrap_value)
    for t in reversed(range(values.shape[0])):
        acc = deltas[t] + discounts[t] * cs[t] * acc
        vs_minus_v[t] = acc
    vs = values + vs_minus_v
    vs_tp1 = np.concatenate([vs[1:], bootstrap_value[None]], axis=0)
    pg_rhos = rhos if pg_rho_bar is None else np.minimum(pg_rho_bar, rhos)
    pg_advantages = pg_rhos * (rewards + discounts * vs_tp1 - values)
    return vs, pg_advantages
'''
VT_DOC = '''    """V-trace value targets and policy-gradient advantages (Espeholt et al. 2018), time-major.

    ``behaviour_log_probs`` and ``target_log_probs``: log mu(a_t | x_t) and log pi(a_t | x_t) of the actions taken,
    under the actor's (behaviour) policy and the learner's (target) policy, [T, B] (or [T] for one environment);
    ``rewards``, ``values`` (the learner's V(x_t)) and ``dones`` (True, or 1, where the episode ended with step t;
    False or 0 elsewhere) of the same shape; ``bootstrap_value``: V(x_T), the value of the state after the last
    step, [B] (a scalar for [T]). ``gamma``: the discount.

    With rho_t = pi / mu = exp(target - behaviour) and the discount gamma_t = gamma * (1 - done_t) (0 where the
    episode ended, so that nothing flows back across its end), and V(x_T) = ``bootstrap_value``:

    - the truncated weights rho'_t = min(rho_bar, rho_t) and c_t = lambda_ * min(c_bar, rho_t); a threshold
      (``rho_bar``, ``c_bar``, ``pg_rho_bar``) of None truncates nothing: rho_t itself;
    - delta_t = rho'_t * (r_t + gamma_t * V(x_{t+1}) - V(x_t));
    - the targets, backwards from t = T - 1: v_t - V(x_t) = delta_t + gamma_t * c_t * (v_{t+1} - V(x_{t+1})),
      with v_T - V(x_T) = 0;
    - the advantages A_t = min(pg_rho_bar, rho_t) * (r_t + gamma_t * v_{t+1} - V(x_t)), with v_T =
      ``bootstrap_value``.

    Returns ``(vs, pg_advantages)``, float64 arrays of the shape of ``values``. No argument is changed.
    """
'''
VT_GOLDEN = "\n\n" + VT_SIG + VT_DOC + VT_BODY
VT_DRIVER = '''"""IMPALA-style actor-learner training of a chain walker with V-trace targets: python train.py"""

from dataclasses import dataclass

import numpy as np

from impala.vtrace import vtrace

N_STATES = 10
MAX_STEPS = 40


@dataclass
class Config:
    num_envs: int = 8
    unroll_length: int = 16
    learner_steps: int = 240
    policy_lag: int = 5
    discount: float = 0.97
    policy_lr: float = 0.5
    value_lr: float = 0.3
    entropy_cost: float = 0.01


class ChainEnvs:
    """A batch of chains of N_STATES cells. Action 1 moves right, 0 left, each slipping the other way one time in
    ten; reaching the right end pays 1 and ends the episode, every other step costs 0.02, and an episode is cut
    after MAX_STEPS steps. An ended episode restarts at cell 0."""

    def __init__(self, rng, n):
        self.rng = rng
        self.pos = np.zeros(n, dtype=int)
        self.age = np.zeros(n, dtype=int)
        self.ret = np.zeros(n)
        self.finished = []

    def step(self, actions):
        move = np.where(actions == 1, 1, -1)
        move = np.where(self.rng.random(move.shape) < 0.1, -move, move)
        self.pos = np.clip(self.pos + move, 0, N_STATES - 1)
        self.age += 1
        goal = self.pos == N_STATES - 1
        rewards = np.where(goal, 1.0, -0.02)
        dones = goal | (self.age >= MAX_STEPS)
        self.ret += rewards
        self.finished.extend(self.ret[dones].tolist())
        self.pos[dones] = 0
        self.age[dones] = 0
        self.ret[dones] = 0.0
        return rewards, dones


def log_softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def main():
    cfg = Config()
    rng = np.random.default_rng(0)
    envs = ChainEnvs(rng, cfg.num_envs)
    logits = np.zeros((N_STATES, 2))
    value = np.zeros(N_STATES)
    behaviour = logits.copy()
    T, B = cfg.unroll_length, cfg.num_envs
    for step in range(1, cfg.learner_steps + 1):
        if step % cfg.policy_lag == 1:
            behaviour = logits.copy()
        states = np.zeros((T, B), dtype=int)
        actions = np.zeros((T, B), dtype=int)
        rewards = np.zeros((T, B))
        dones = np.zeros((T, B), dtype=bool)
        mu = np.zeros((T, B))
        for t in range(T):
            states[t] = envs.pos
            probs = np.exp(log_softmax(behaviour[envs.pos]))
            actions[t] = (rng.random(B) < probs[:, 1]).astype(int)
            mu[t] = np.log(probs[np.arange(B), actions[t]])
            rewards[t], dones[t] = envs.step(actions[t])
        logp = log_softmax(logits[states])
        pi = np.take_along_axis(logp, actions[..., None], axis=-1)[..., 0]
        vs, advantages = vtrace(mu, pi, rewards, value[states], value[envs.pos], dones, gamma=cfg.discount)
        probs = np.exp(logp)
        onehot = np.eye(2)[actions]
        entropy = -(probs * logp).sum(axis=-1, keepdims=True)
        grad = advantages[..., None] * (onehot - probs) - cfg.entropy_cost * probs * (logp + entropy)
        np.add.at(logits, states.ravel(), cfg.policy_lr * grad.reshape(-1, 2) / (T * B) * N_STATES)
        np.add.at(value, states.ravel(), cfg.value_lr * (vs - value[states]).ravel() / (T * B) * N_STATES)
        if step % 40 == 0:
            recent = envs.finished[-50:]
            rho = np.exp(pi - mu)
            print(f"step {step}: mean return {np.mean(recent):.3f} over {len(recent)} episodes, "
                  f"V(start) {value[0]:.3f}, p(right | start) {np.exp(log_softmax(logits[0]))[1]:.3f}, "
                  f"rho truncated {np.mean(rho > 1.0):.3f}")


if __name__ == "__main__":
    main()
'''

_vt = editor(VT_SIG, VT_BODY)

VT_WRONG = {
    "traces truncated at rho_bar": _vt("cs = lambda_ * (rhos if c_bar is None else np.minimum(c_bar, rhos))",
                                       "cs = lambda_ * (rhos if rho_bar is None else np.minimum(rho_bar, rhos))"),
    "lambda ignored": _vt("cs = lambda_ * (rhos if c_bar is None else np.minimum(c_bar, rhos))",
                          "cs = rhos if c_bar is None else np.minimum(c_bar, rhos)"),
    "lambda inside the clip": _vt("cs = lambda_ * (rhos if c_bar is None else np.minimum(c_bar, rhos))",
                                  "cs = lambda_ * rhos if c_bar is None else np.minimum(c_bar, lambda_ * rhos)"),
    "advantages weighted by the rho_bar weights": _vt(
        "pg_rhos = rhos if pg_rho_bar is None else np.minimum(pg_rho_bar, rhos)", "pg_rhos = clipped_rhos"),
    "None thresholds not handled": _vt('''    clipped_rhos = rhos if rho_bar is None else np.minimum(rho_bar, rhos)
    cs = lambda_ * (rhos if c_bar is None else np.minimum(c_bar, rhos))
''', '''    clipped_rhos = np.minimum(rho_bar, rhos)
    cs = lambda_ * np.minimum(c_bar, rhos)
''').replace("pg_rhos = rhos if pg_rho_bar is None else np.minimum(pg_rho_bar, rhos)",
             "pg_rhos = np.minimum(pg_rho_bar, rhos)"),
    "trace not cut at done flags": _vt("acc = deltas[t] + discounts[t] * cs[t] * acc",
                                       "acc = deltas[t] + gamma * cs[t] * acc"),
    "advantages bootstrapped from the values": _vt("pg_rhos * (rewards + discounts * vs_tp1 - values)",
                                                   "pg_rhos * (rewards + discounts * values_tp1 - values)"),
    "next values stacked with np.vstack": _vt(
        "values_tp1 = np.concatenate([values[1:], bootstrap_value[None]], axis=0)",
        "values_tp1 = np.vstack([values[1:], bootstrap_value[None]])").replace(
        "vs_tp1 = np.concatenate([vs[1:], bootstrap_value[None]], axis=0)",
        "vs_tp1 = np.vstack([vs[1:], bootstrap_value[None]])"),
    "first step left out of the backward pass": _vt("for t in reversed(range(values.shape[0])):",
                                                    "for t in range(values.shape[0] - 1, 0, -1):"),
    "done flags negated with ~": _vt("discounts = gamma * (1.0 - np.asarray(dones, dtype=np.float64))",
                                     "discounts = gamma * ~np.asarray(dones)"),
}
VT_RIGHT = {
    "the recursion on vs itself, element by element": VT_SIG + '''    import math

    mu = np.asarray(behaviour_log_probs, dtype=float)
    pi = np.asarray(target_log_probs, dtype=float)
    r = np.asarray(rewards, dtype=float)
    v = np.asarray(values, dtype=float)
    d = np.asarray(dones)
    boot = np.asarray(bootstrap_value, dtype=float).reshape(-1)
    single = v.ndim == 1
    if single:
        mu, pi, r, v, d = (x[:, None] for x in (mu, pi, r, v, d))
    T, B = v.shape
    vs = np.zeros((T, B))
    adv = np.zeros((T, B))
    for b in range(B):
        next_v = float(boot[b])
        next_vs = float(boot[b])
        for t in range(T - 1, -1, -1):
            rho = math.exp(pi[t, b] - mu[t, b])
            g = 0.0 if d[t, b] else gamma
            rho_td = rho if rho_bar is None else min(rho_bar, rho)
            c = lambda_ * (rho if c_bar is None else min(c_bar, rho))
            rho_pg = rho if pg_rho_bar is None else min(pg_rho_bar, rho)
            target = v[t, b] + rho_td * (r[t, b] + g * next_v - v[t, b]) + g * c * (next_vs - next_v)
            adv[t, b] = rho_pg * (r[t, b] + g * next_vs - v[t, b])
            vs[t, b] = target
            next_v, next_vs = v[t, b], target
    if single:
        return vs[:, 0], adv[:, 0]
    return vs, adv
''',
    "closed form with products of discounted traces": VT_SIG + '''\
    rhos = np.exp(np.subtract(target_log_probs, behaviour_log_probs, dtype=np.float64))
    v = np.asarray(values, dtype=np.float64)
    r = np.asarray(rewards, dtype=np.float64)
    boot = np.asarray(bootstrap_value, dtype=np.float64)
    disc = np.where(np.asarray(dones).astype(bool), 0.0, gamma)

    def truncated(bar):
        return rhos if bar is None else np.clip(rhos, None, bar)

    cs = truncated(c_bar) * lambda_
    following = np.concatenate([v[1:], boot[np.newaxis]])
    deltas = truncated(rho_bar) * (r + disc * following - v)
    T = v.shape[0]
    correction = np.zeros_like(v)
    for t in range(T):
        coef = np.ones_like(boot)
        for s in range(t, T):
            correction[t] = correction[t] + coef * deltas[s]
            coef = coef * disc[s] * cs[s]
    vs = v + correction
    vs_following = np.concatenate([vs[1:], boot[np.newaxis]])
    return vs, truncated(pg_rho_bar) * (r + disc * vs_following - v)
''',
}


def vt_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general unrolls: log-ratios on both sides of 0 (weights above and below every threshold), done
    flags as booleans, as 0/1 integers and as 0/1 floats, in the middle and at the last step; the default
    thresholds, other ``rho_bar``, ``c_bar``, ``pg_rho_bar`` and ``lambda_``, each threshold None and all three,
    other discounts; a single environment ([T] arrays with a scalar bootstrap), one step, and a batch of one. Each
    gives both results and the arguments as the caller holds them afterwards."""
    rng = np.random.default_rng(149)
    calls: list[Callable[[], object]] = []
    for T, B, kwargs, spread, p_done, kind in (
            (8, 4, {}, 1.0, 0.2, "bool"),
            (6, 3, {"rho_bar": 2.0, "c_bar": 0.5, "pg_rho_bar": 1.5, "lambda_": 0.9, "gamma": 0.9}, 1.2, 0.15,
             "bool"),
            (7, 2, {"lambda_": 0.5}, 1.5, 0.0, "bool"),
            (5, 3, {"rho_bar": None, "c_bar": None, "pg_rho_bar": None}, 0.8, 0.2, "bool"),
            (6, 3, {"rho_bar": None, "c_bar": 1.5, "lambda_": 0.7}, 1.0, 0.1, "bool"),
            (6, None, {"gamma": 0.8, "c_bar": 0.8}, 1.0, 0.25, "bool"),
            (1, 4, {"rho_bar": 0.5, "pg_rho_bar": 2.0}, 1.0, 0.5, "bool"),
            (6, 2, {"c_bar": 2.0, "gamma": 0.95}, 0.9, 0.3, "float"),
            (5, 3, {"rho_bar": 0.8, "pg_rho_bar": None, "gamma": 1.0}, 1.0, 0.2, "int"),
            (9, 1, {"lambda_": 0.95, "c_bar": 1.2, "rho_bar": 1.2}, 0.7, 0.1, "bool")):
        shape = (T,) if B is None else (T, B)
        behaviour = np.log(rng.uniform(0.05, 0.95, size=shape))
        target = behaviour + spread * rng.normal(size=shape)
        rewards = rng.normal(size=shape)
        values = rng.normal(size=shape)
        bootstrap = rng.normal() if B is None else rng.normal(size=B)
        dones = rng.random(shape) < p_done
        dones[-1:] |= rng.random(shape[1:]) < 0.3
        dones = dones.astype(float) if kind == "float" else dones.astype(int) if kind == "int" else dones

        def call(behaviour=behaviour, target=target, rewards=rewards, values=values, bootstrap=bootstrap,
                 dones=dones, kwargs=kwargs) -> object:
            args = [np.array(x, copy=True) for x in (behaviour, target, rewards, values, bootstrap, dones)]
            return ns["vtrace"](*args, **kwargs), args

        calls.append(call)
    return calls


# -- The LAMB optimiser's layer-wise adaptive step (You et al. 2019) ----------------------------------------------

LB_HEAD = '''class Lamb:
    """LAMB over a dict of named numpy parameters, which ``step`` updates in place (the very arrays of
    ``self.params``). The hyperparameters live in ``self.defaults``; ``self.exp_avg`` and ``self.exp_avg_sq``
    hold each parameter's first and second moments by name, and ``self.t`` counts the steps taken.
    ``exclude_from_weight_decay`` and ``exclude_from_layer_adaptation`` are lists of regular expressions searched
    in the parameters' names; the second, when None, is the first."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01, bias_correction=True,
                 exclude_from_weight_decay=None, exclude_from_layer_adaptation=None, max_trust_ratio=None):
        if lr < 0.0:
            raise ValueError(f"invalid learning rate {lr}")
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"invalid betas {betas}")
        self.params = dict(params)
        self.defaults = {
            "lr": lr,
            "betas": tuple(betas),
            "eps": eps,
            "weight_decay": weight_decay,
            "bias_correction": bias_correction,
            "exclude_from_weight_decay": list(exclude_from_weight_decay or []),
            "exclude_from_layer_adaptation": (None if exclude_from_layer_adaptation is None
                                              else list(exclude_from_layer_adaptation)),
            "max_trust_ratio": max_trust_ratio,
        }
        self.t = 0
        self.exp_avg = {name: np.zeros_like(p, dtype=np.float64) for name, p in self.params.items()}
        self.exp_avg_sq = {name: np.zeros_like(p, dtype=np.float64) for name, p in self.params.items()}

    def step(self, grads):
'''
LB_BODY = '''        d = self.defaults
        beta1, beta2 = d["betas"]
        self.t += 1
        decay_excluded = d["exclude_from_weight_decay"]
        adapt_excluded = d["exclude_from_layer_adaptation"]
        if adapt_excluded is None:
            adapt_excluded = decay_excluded
        ratios = {}
        for name, p in self.params.items():
            g = grads.get(name)
            if g is None:
                continue
            m = self.exp_avg[name]
            v = self.exp_avg_sq[name]
            m *= beta1
            m += (1.0 - beta1) * g
            v *= beta2
            v += (1.0 - beta2) * g * g
            if d["bias_correction"]:
                m_hat = m / (1.0 - beta1 ** self.t)
                v_hat = v / (1.0 - beta2 ** self.t)
            else:
                m_hat, v_hat = m, v
            update = m_hat / (np.sqrt(v_hat) + d["eps"])
            if d["weight_decay"] and not any(re.search(pattern, name) for pattern in decay_excluded):
                update = update + d["weight_decay"] * p
            ratio = 1.0
            if not any(re.search(pattern, name) for pattern in adapt_excluded):
                w_norm = float(np.linalg.norm(p))
                u_norm = float(np.linalg.norm(update))
                if w_norm > 0.0 and u_norm > 0.0:
                    ratio = w_norm / u_norm
                    if d["max_trust_ratio"] is not None:
                        ratio = min(ratio, d["max_trust_ratio"])
            ratios[name] = ratio
            p -= d["lr"] * ratio * update
        return ratios
'''
LB_DOC = '''        """One LAMB update of every parameter that has a gradient.

        ``grads``: a dict from parameter names to gradients of the parameters' shapes (not changed); a parameter
        whose name is missing from it, or maps to None, is skipped: neither it nor its moments change. ``self.t``
        is incremented first, so the first step has t = 1. With (beta1, beta2) = ``self.defaults["betas"]`` and,
        per parameter p (its value before this step) with gradient g:

        - ``self.exp_avg[name]`` becomes ``beta1 * m + (1 - beta1) * g`` and ``self.exp_avg_sq[name]``
          ``beta2 * v + (1 - beta2) * g ** 2``;
        - with ``defaults["bias_correction"]`` they are divided by ``1 - beta1 ** t`` and ``1 - beta2 ** t`` (the
          stored moments are not); the Adam update is ``m_hat / (sqrt(v_hat) + eps)``;
        - unless ``defaults["weight_decay"]`` is 0 or a pattern of ``exclude_from_weight_decay`` is found in the
          name (``re.search``), ``weight_decay * p`` is added to the update;
        - the trust ratio is ``||p|| / ||update||`` (Frobenius norms), 1.0 when either norm is zero, and capped at
          ``defaults["max_trust_ratio"]`` unless that is None; it is 1.0 for a parameter whose name matches a
          pattern of ``exclude_from_layer_adaptation`` (of ``exclude_from_weight_decay`` when that is None);
        - ``p -= lr * trust_ratio * update``, in place.

        Returns a dict from the names of the parameters updated to their trust ratios (floats)."""
'''
LB_GOLDEN = "\n\n" + LB_HEAD + LB_DOC + LB_BODY
LB_DRIVER = '''"""Train a two-layer classifier with LAMB, as the BERT pretraining recipe sets it up: python train.py"""

import numpy as np

from lamb.optim import Lamb

OPTIMIZER = {"lr": 0.02, "weight_decay": 0.01, "exclude_from_weight_decay": ["LayerNorm", "layer_norm", "bias"]}
N_FEATURES = 8
HIDDEN = 32
CLASSES = 3


def make_data(rng, n=1200):
    """Points whose class is set by the angle of their first two features, the rest noise."""
    x = rng.normal(size=(n, N_FEATURES))
    angle = np.arctan2(x[:, 1], x[:, 0]) + 0.3 * np.linalg.norm(x[:, :2], axis=1)
    y = np.floor((angle + np.pi) / (2 * np.pi) * CLASSES).astype(int) % CLASSES
    return x, y


def init_params(rng):
    return {
        "hidden.weight": rng.normal(scale=0.3, size=(N_FEATURES, HIDDEN)),
        "hidden.bias": np.zeros(HIDDEN),
        "out.weight": rng.normal(scale=0.3, size=(HIDDEN, CLASSES)),
        "out.bias": np.zeros(CLASSES),
    }


def forward_backward(params, x, y):
    pre = x @ params["hidden.weight"] + params["hidden.bias"]
    h = np.maximum(pre, 0.0)
    logits = h @ params["out.weight"] + params["out.bias"]
    logits = logits - logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=1, keepdims=True)
    loss = float(-np.mean(np.log(probs[np.arange(len(y)), y])))
    dlogits = probs.copy()
    dlogits[np.arange(len(y)), y] -= 1.0
    dlogits /= len(y)
    dh = dlogits @ params["out.weight"].T * (pre > 0)
    grads = {"out.weight": h.T @ dlogits, "out.bias": dlogits.sum(axis=0),
             "hidden.weight": x.T @ dh, "hidden.bias": dh.sum(axis=0)}
    accuracy = float(np.mean(probs.argmax(axis=1) == y))
    return loss, accuracy, grads


def main():
    rng = np.random.default_rng(0)
    x, y = make_data(rng)
    params = init_params(rng)
    optimizer = Lamb(params, **OPTIMIZER)
    for step in range(1, 401):
        idx = rng.choice(len(x), size=64, replace=False)
        loss, accuracy, grads = forward_backward(params, x[idx], y[idx])
        ratios = optimizer.step(grads)
        if step % 100 == 0:
            full_loss, full_accuracy, _ = forward_backward(params, x, y)
            shown = ", ".join(f"{name} {ratio:.3f}" for name, ratio in sorted(ratios.items()))
            print(f"step {step}: loss {full_loss:.4f}, accuracy {full_accuracy:.3f}, trust ratios: {shown}")


if __name__ == "__main__":
    main()
'''

_lb = editor(LB_HEAD, LB_BODY)

LB_WRONG = {
    "bias_correction flag ignored": _lb('''            if d["bias_correction"]:
                m_hat = m / (1.0 - beta1 ** self.t)
                v_hat = v / (1.0 - beta2 ** self.t)
            else:
                m_hat, v_hat = m, v
''', '''            m_hat = m / (1.0 - beta1 ** self.t)
            v_hat = v / (1.0 - beta2 ** self.t)
'''),
    "eps inside the square root": _lb('update = m_hat / (np.sqrt(v_hat) + d["eps"])',
                                      'update = m_hat / np.sqrt(v_hat + d["eps"])'),
    "weight-decay exclusions ignored": _lb(
        'if d["weight_decay"] and not any(re.search(pattern, name) for pattern in decay_excluded):',
        'if d["weight_decay"]:'),
    "layer-adaptation exclusions without the fallback": _lb('''\
        adapt_excluded = d["exclude_from_layer_adaptation"]
        if adapt_excluded is None:
            adapt_excluded = decay_excluded
''', '''        adapt_excluded = d["exclude_from_layer_adaptation"] or []
'''),
    "zero-norm guard dropped": _lb('''                if w_norm > 0.0 and u_norm > 0.0:
                    ratio = w_norm / u_norm
                    if d["max_trust_ratio"] is not None:
                        ratio = min(ratio, d["max_trust_ratio"])
''', '''                ratio = w_norm / u_norm
                if d["max_trust_ratio"] is not None:
                    ratio = min(ratio, d["max_trust_ratio"])
'''),
    "only the weight norm guarded": _lb("if w_norm > 0.0 and u_norm > 0.0:", "if w_norm > 0.0:"),
    "max_trust_ratio ignored": _lb('''                    ratio = w_norm / u_norm
                    if d["max_trust_ratio"] is not None:
                        ratio = min(ratio, d["max_trust_ratio"])
''', '''                    ratio = w_norm / u_norm
'''),
    "exclusions matched as whole names": _lb(
        'if d["weight_decay"] and not any(re.search(pattern, name) for pattern in decay_excluded):',
        'if d["weight_decay"] and name not in decay_excluded:').replace(
        "if not any(re.search(pattern, name) for pattern in adapt_excluded):", "if name not in adapt_excluded:"),
    "weight decay outside the trust ratio": _lb('''\
            if d["weight_decay"] and not any(re.search(pattern, name) for pattern in decay_excluded):
                update = update + d["weight_decay"] * p
''', '''            decay = 0.0
            if d["weight_decay"] and not any(re.search(pattern, name) for pattern in decay_excluded):
                decay = d["weight_decay"]
''').replace('''            p -= d["lr"] * ratio * update
''', '''            p -= d["lr"] * (ratio * update + decay * p)
'''),
    "parameter without a gradient taken as zero": _lb('''            if g is None:
                continue
''', '''            if g is None:
                g = np.zeros_like(p)
'''),
}
LB_RIGHT = {
    "moments replaced, compiled patterns, norms by sums": LB_HEAD + '''        import math
        import re as regex

        cfg = self.defaults
        b1, b2 = cfg["betas"]
        self.t = self.t + 1
        step = self.t
        no_decay = [regex.compile(p) for p in cfg["exclude_from_weight_decay"]]
        raw = cfg["exclude_from_layer_adaptation"]
        no_adapt = no_decay if raw is None else [regex.compile(p) for p in raw]
        out = {}
        for name in self.params:
            if name not in grads or grads[name] is None:
                continue
            param = self.params[name]
            grad = np.asarray(grads[name], dtype=float)
            self.exp_avg[name] = b1 * self.exp_avg[name] + (1 - b1) * grad
            self.exp_avg_sq[name] = b2 * self.exp_avg_sq[name] + (1 - b2) * np.square(grad)
            m, v = self.exp_avg[name], self.exp_avg_sq[name]
            if cfg["bias_correction"]:
                m = m / (1 - b1 ** step)
                v = v / (1 - b2 ** step)
            upd = m / (np.sqrt(v) + cfg["eps"])
            if cfg["weight_decay"] != 0 and not any(p.search(name) for p in no_decay):
                upd = upd + cfg["weight_decay"] * param
            trust = 1.0
            if not any(p.search(name) for p in no_adapt):
                wn = math.sqrt(float(np.sum(param * param)))
                un = math.sqrt(float(np.sum(upd * upd)))
                if wn > 0 and un > 0:
                    trust = wn / un
                    cap = cfg["max_trust_ratio"]
                    if cap is not None and trust > cap:
                        trust = cap
            out[name] = trust
            param -= cfg["lr"] * trust * upd
        return out
''',
    "flat vectors and a matching helper": LB_HEAD + '''        lr = self.defaults["lr"]
        beta1, beta2 = self.defaults["betas"]
        eps = self.defaults["eps"]
        wd = self.defaults["weight_decay"]
        cap = self.defaults["max_trust_ratio"]
        self.t += 1
        c1 = 1.0 - beta1 ** self.t if self.defaults["bias_correction"] else 1.0
        c2 = 1.0 - beta2 ** self.t if self.defaults["bias_correction"] else 1.0

        def matches(name, patterns):
            for pattern in patterns:
                if re.search(pattern, name) is not None:
                    return True
            return False

        skip_decay = self.defaults["exclude_from_weight_decay"]
        skip_adapt = self.defaults["exclude_from_layer_adaptation"]
        if skip_adapt is None:
            skip_adapt = skip_decay
        result = {}
        for name, p in self.params.items():
            g = grads.get(name, None)
            if g is None:
                continue
            m = self.exp_avg[name]
            v = self.exp_avg_sq[name]
            m[...] = beta1 * m + (1.0 - beta1) * g
            v[...] = beta2 * v + (1.0 - beta2) * g ** 2
            direction = (m / c1) / (np.sqrt(v / c2) + eps)
            if wd != 0.0 and not matches(name, skip_decay):
                direction += wd * p
            flat_w = p.ravel()
            flat_u = direction.ravel()
            w = float(np.sqrt(np.dot(flat_w, flat_w)))
            u = float(np.sqrt(np.dot(flat_u, flat_u)))
            if matches(name, skip_adapt) or w == 0.0 or u == 0.0:
                r = 1.0
            else:
                r = w / u if cap is None else min(w / u, cap)
            result[name] = r
            p -= (lr * r) * direction
        return result
''',
}


def lb_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of a few steps on general settings: BERT's exclusion list with zero biases and a gain of ones; no bias
    correction with another weight decay and weights large enough that a ``max_trust_ratio`` caps the ratio; an
    adaptation exclusion list of its own (a regular expression, anchored) besides the weight-decay one; a weight
    that starts at zero while not excluded, and a parameter whose gradients are zero with no weight decay (both
    norms zero); gradients missing or None for some parameters on some steps; other betas and eps. Each gives,
    after every step, the trust ratios by name, the parameters, the moments, the gradients and ``t``."""
    rng = np.random.default_rng(151)
    calls: list[Callable[[], object]] = []
    for shapes, kwargs, steps, scale, zero_init, zero_grad, missing in (
            ({"enc.weight": (5, 4), "enc.bias": (4,), "enc.LayerNorm.gain": (4,)},
             {"exclude_from_weight_decay": ["LayerNorm", "layer_norm", "bias"]}, 4, 1.0, ("enc.bias",), (), {}),
            ({"w1": (6, 3), "w2": (3,)}, {"bias_correction": False, "weight_decay": 0.1, "max_trust_ratio": 2.0,
                                          "lr": 0.05}, 4, 30.0, (), (), {}),
            ({"emb.table": (7, 3), "head.weight": (3, 2), "head.bias": (2,)},
             {"exclude_from_weight_decay": ["bias"], "exclude_from_layer_adaptation": [r"^emb\."],
              "betas": (0.8, 0.99), "eps": 1e-3, "lr": 0.01}, 4, 1.0, ("head.bias",), (), {}),
            ({"a.weight": (4, 4), "b.weight": (3,), "c.scale": (2, 2)},
             {"weight_decay": 0.0, "max_trust_ratio": 5.0}, 3, 1.0, ("a.weight",), ("c.scale",), {}),
            ({"x.weight": (3, 3), "y.weight": (4,), "z.bias": (2,)},
             {"exclude_from_weight_decay": ["z"], "eps": 1e-8, "weight_decay": 0.05}, 4, 2.0, (), (),
             {1: ("y.weight", "absent"), 2: ("x.weight", "none"), 3: ("z.bias", "absent")}),
            ({"big.weight": (5, 5), "small.weight": (5,)}, {"max_trust_ratio": None, "lr": 0.001}, 3, 50.0, (), (),
             {})):
        init = {name: (np.zeros(shape) if name in zero_init else scale * rng.normal(size=shape))
                for name, shape in shapes.items()}
        if "enc.LayerNorm.gain" in init:
            init["enc.LayerNorm.gain"] = np.ones(shapes["enc.LayerNorm.gain"])
        grad_seq = []
        for k in range(steps):
            grads = {name: (np.zeros(shape) if name in zero_grad else
                            rng.normal(size=shape) * rng.uniform(0.1, 2.0, size=shape))
                     for name, shape in shapes.items()}
            if k in missing:
                name, how = missing[k]
                if how == "absent":
                    del grads[name]
                else:
                    grads[name] = None
            grad_seq.append(grads)

        def call(init=init, grad_seq=grad_seq, kwargs=kwargs) -> object:
            params = {name: p.copy() for name, p in init.items()}
            optimizer = ns["Lamb"](params, **kwargs)
            trace = []
            for grads in grad_seq:
                held = {name: None if g is None else g.copy() for name, g in grads.items()}
                ratios = optimizer.step(held)
                names = sorted(params)
                trace.append((sorted(ratios), [float(ratios[k]) for k in sorted(ratios)],
                              [params[k].copy() for k in names], [np.array(optimizer.exp_avg[k]) for k in names],
                              [np.array(optimizer.exp_avg_sq[k]) for k in names],
                              [held[k] for k in sorted(held)], optimizer.t))
            return trace

        calls.append(call)
    return calls


# -- Perplexity of a long sequence by a strided sliding window ----------------------------------------------------

PL_SIG = "def sliding_window_perplexity(model, token_ids, stride=128, max_length=None):\n"
PL_BODY = '''    ids = np.asarray(token_ids)
    if ids.ndim == 2:
        if ids.shape[0] != 1:
            raise ValueError(f"one sequence at a time, got a batch of {ids.shape[0]}")
        ids = ids[0]
    if ids.ndim != 1:
        raise ValueError(f"token_ids must be 1-D or [1, n], got shape {ids.shape}")
    if max_length is None:
        max_length = model.config.n_positions
    if max_length < 2:
        raise ValueError(f"max_length must be at least 2, got {max_length}")
    if not 1 <= stride <= max_length:
        raise ValueError(f"stride must be in [1, {max_length}], got {stride}")
    seq_len = ids.shape[0]
    if seq_len < 2:
        raise ValueError("at least two tokens are needed to score one")
    nll_sum = 0.0
    n_scored = 0
    prev_end = 0
    for begin in range(0, seq_len, stride):
        end = min(begin + max_length, seq_len)
        trg_len = end - prev_end
        window = ids[begin:end]
        labels = window.astype(np.int64)
        labels[:-trg_len] = -100
        log_probs = model.log_probs(window)
        targets = labels[1:]
        scored = targets != -100
        picked = log_probs[np.arange(targets.shape[0]), np.where(scored, targets, 0)]
        nll_sum -= float(picked[scored].sum())
        n_scored += int(scored.sum())
        prev_end = end
        if end == seq_len:
            break
    mean_nll = nll_sum / n_scored
    return float(np.exp(mean_nll)), mean_nll, n_scored
'''
PL_DOC = '''    """The perplexity of one long token sequence under a model of bounded context, by a sliding window.

    ``model``: has ``model.config.n_positions`` (its context size) and ``model.log_probs(window)``, which takes a
    1-D int array of L tokens (1 <= L <= the context) and returns an [L, vocab] array whose row i holds the
    log-probabilities of the token after ``window[:i + 1]``. ``token_ids``: a 1-D int sequence (list or array), or
    a [1, n] array (one sequence of a batch); a batch of more than one raises ValueError, as does any other rank.
    ``max_length``: the window's length, ``model.config.n_positions`` when None; below 2 raises ValueError.
    ``stride``: how far each window starts after the previous one; outside [1, max_length] raises ValueError.
    A sequence of fewer than two tokens raises ValueError.

    Windows start at 0, stride, 2 * stride, ... and end at ``min(start + max_length, n)``; the last is the first
    that reaches the end of the sequence (it may be shorter). In each window the labels are its tokens with those
    before ``end - prev_end`` from its end (``prev_end`` the previous window's end, 0 for the first) set to -100,
    so that only tokens not scored by an earlier window are scored; labels are shifted as a causal LM shifts them:
    the token at window position j >= 1 is scored by row j - 1 of the window's log-probabilities (the window's
    first token is never scored), and -100 labels are not scored. The mean NLL is the sum of the NLLs of all
    scored tokens over their count (each window weighted by the tokens it scores).

    Returns ``(perplexity, mean_nll, n_scored)``: ``exp(mean_nll)`` and the mean NLL as floats, and the number of
    tokens scored as an int. No argument is changed.
    """
'''
PL_GOLDEN = "\n\n" + PL_SIG + PL_DOC + PL_BODY
PL_NGRAM = '''"""A character n-gram language model with add-k smoothing and linear interpolation."""

from dataclasses import dataclass

import numpy as np


@dataclass
class NGramConfig:
    vocab_size: int = 27
    n_positions: int = 256
    add_k: float = 0.1
    weights: tuple = (0.1, 0.3, 0.6)


class NGramLM:
    """Interpolated unigram, bigram and trigram probabilities; the first token of a window has no trigram
    history, so the model predicts from it by its bigram and unigram parts alone."""

    def __init__(self, config):
        self.config = config
        v = config.vocab_size
        self.counts = [np.zeros(v), np.zeros((v, v)), np.zeros((v, v, v))]

    def fit(self, ids):
        ids = np.asarray(ids)
        np.add.at(self.counts[0], ids, 1.0)
        np.add.at(self.counts[1], (ids[:-1], ids[1:]), 1.0)
        np.add.at(self.counts[2], (ids[:-2], ids[1:-1], ids[2:]), 1.0)
        k = self.config.add_k
        uni, bi, tri = ((c + k) / (c + k).sum(axis=-1, keepdims=True) for c in self.counts)
        w1, w2, w3 = self.config.weights
        self.first = np.log((w2 + w3) * bi + w1 * uni[None, :])
        self.table = np.log(w3 * tri + w2 * bi[None, :, :] + w1 * uni[None, None, :])
        return self

    def log_probs(self, input_ids):
        ids = np.asarray(input_ids)
        if len(ids) > self.config.n_positions:
            raise ValueError("window longer than the model's context")
        return np.concatenate([self.first[ids[:1]], self.table[ids[:-1], ids[1:]]], axis=0)
'''
PL_DRIVER = '''"""Perplexity of character trigram models on held-out text, by a sliding window: python evaluate.py"""

import numpy as np

from lmeval.ngram import NGramConfig, NGramLM
from lmeval.perplexity import sliding_window_perplexity

ALPHABET = "abcdefghijklmnopqrstuvwxyz "


def make_text(rng, n_words, lexicon):
    ranks = np.arange(1, len(lexicon) + 1)
    p = 1.0 / ranks
    words = rng.choice(lexicon, size=n_words, p=p / p.sum())
    return " ".join(words)


def encode(text):
    return np.array([ALPHABET.index(c) for c in text], dtype=np.int64)


def main():
    rng = np.random.default_rng(0)
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
    lexicon = ["".join(rng.choice(syllables, size=int(rng.integers(1, 4)))) for _ in range(300)]
    train = encode(make_text(rng, 8000, lexicon))
    valid = encode(make_text(rng, 800, lexicon))[:3001]
    for add_k in (1.0, 0.1, 0.01):
        model = NGramLM(NGramConfig(add_k=add_k)).fit(train)
        ppl, nll, n = sliding_window_perplexity(model, valid)
        print(f"add-k {add_k}: perplexity {ppl:.4f}, {nll / np.log(2):.4f} bits per character over {n} characters")


if __name__ == "__main__":
    main()
'''

_pl = editor(PL_SIG, PL_BODY)

PL_WRONG = {
    "windows averaged, not weighted by tokens scored": _pl("    nll_sum = 0.0\n", "    window_nlls = []\n").replace(
        "        nll_sum -= float(picked[scored].sum())\n",
        "        window_nlls.append(-float(picked[scored].mean()))\n").replace(
        "mean_nll = nll_sum / n_scored", "mean_nll = float(np.mean(window_nlls))"),
    "target length taken as the stride after the first window": _pl(
        "trg_len = end - prev_end", "trg_len = end - begin if begin == 0 else stride"),
    "loop not stopped at the end": _pl('''        if end == seq_len:
            break
''', ""),
    "first label of each window counted": _pl("n_scored += int(scored.sum())", "n_scored += trg_len"),
    "max_length argument ignored": _pl('''    if max_length is None:
        max_length = model.config.n_positions
''', '''    max_length = model.config.n_positions
'''),
    "stride not checked against the window": _pl('''    if not 1 <= stride <= max_length:
        raise ValueError(f"stride must be in [1, {max_length}], got {stride}")
''', ""),
    "scored tokens counted as n - 1": _pl("        n_scored += int(scored.sum())\n", "").replace(
        "    mean_nll = nll_sum / n_scored\n", "    n_scored = seq_len - 1\n    mean_nll = nll_sum / n_scored\n"),
    "several sequences flattened into one": _pl('''    ids = np.asarray(token_ids)
    if ids.ndim == 2:
        if ids.shape[0] != 1:
            raise ValueError(f"one sequence at a time, got a batch of {ids.shape[0]}")
        ids = ids[0]
    if ids.ndim != 1:
        raise ValueError(f"token_ids must be 1-D or [1, n], got shape {ids.shape}")
''', '''    ids = np.asarray(token_ids).reshape(-1)
'''),
    "tail window dropped": _pl("for begin in range(0, seq_len, stride):",
                               "for begin in range(0, seq_len - max_length + 1, stride):"),
}
PL_RIGHT = {
    "windows listed first, targets by absolute position": PL_SIG + '''    arr = np.asarray(token_ids)
    if arr.ndim == 2 and arr.shape[0] == 1:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise ValueError("expected a single sequence")
    window = model.config.n_positions if max_length is None else max_length
    if window < 2 or stride < 1 or stride > window:
        raise ValueError("bad window or stride")
    n = arr.size
    if n < 2:
        raise ValueError("sequence too short")
    spans = []
    start = 0
    while True:
        stop = min(start + window, n)
        spans.append((start, stop))
        if stop == n:
            break
        start += stride
    total = 0.0
    count = 0
    scored_until = 0
    for start, stop in spans:
        lp = model.log_probs(arr[start:stop])
        positions = np.arange(max(start + 1, scored_until), stop)
        total += float(-lp[positions - start - 1, arr[positions]].sum())
        count += positions.size
        scored_until = stop
    mean = total / count
    return float(np.exp(mean)), mean, int(count)
''',
    "token by token in plain floats": PL_SIG + '''    import math

    seq = np.asarray(token_ids)
    if seq.ndim == 2:
        if len(seq) != 1:
            raise ValueError("batch of one expected")
        seq = seq[0]
    if seq.ndim != 1:
        raise ValueError("bad rank")
    size = max_length if max_length is not None else model.config.n_positions
    if size < 2:
        raise ValueError("max_length too small")
    if stride < 1 or stride > size:
        raise ValueError("stride out of range")
    tokens = [int(t) for t in seq]
    if len(tokens) < 2:
        raise ValueError("too short")
    nll = 0.0
    scored = 0
    done_until = 0
    begin = 0
    while begin < len(tokens):
        end = min(begin + size, len(tokens))
        lp = model.log_probs(seq[begin:end])
        for pos in range(begin + 1, end):
            if pos < done_until:
                continue
            nll -= float(lp[pos - begin - 1][tokens[pos]])
            scored += 1
        done_until = end
        if end == len(tokens):
            break
        begin += stride
    return math.exp(nll / scored), nll / scored, scored
''',
}


class _ToyLM:
    """A model for the check: bigram scores plus the token two back inside the window, and a drift with the
    position in the window, so that where a window starts changes what it predicts."""

    def __init__(self, vocab: int, n_positions: int, seed: int) -> None:
        r = np.random.default_rng(seed)
        self.config = SimpleNamespace(n_positions=n_positions, vocab_size=vocab)
        self.bigram = r.normal(size=(vocab, vocab))
        self.skip = r.normal(size=(vocab, vocab))

    def log_probs(self, input_ids: Any) -> np.ndarray:
        ids = np.asarray(input_ids)
        if not 1 <= len(ids) <= self.config.n_positions:
            raise ValueError("window outside the context")
        z = self.bigram[ids].copy()
        z[1:] += 0.7 * self.skip[ids[:-1]]
        z[:, 0] += 0.1 * np.arange(len(ids))
        z -= z.max(axis=1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def pl_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general sequences: the default stride with a last window shorter than the stride, a given
    ``max_length`` below the model's context, windows that do not overlap (stride = max_length) with a last window
    of one token, a stride of 1, a sequence shorter than one window, of two tokens and of one, a [1, n] and a
    [2, n] array, a list, windows that end exactly at the sequence's end, and a stride of 0, above max_length and a
    max_length of 1. Each gives the result and the tokens as the caller holds them afterwards."""
    rng = np.random.default_rng(157)
    calls: list[Callable[[], object]] = []
    for n, stride, max_length, n_positions, form in (
            (700, None, None, 256, "array"),
            (100, 10, 32, 64, "array"),
            (96, 32, None, 32, "array"),
            (97, 32, None, 32, "array"),
            (300, None, None, 128, "array"),
            (20, 8, None, 64, "array"),
            (2, 4, None, 16, "array"),
            (1, 4, None, 16, "array"),
            (60, 12, 24, 64, "row"),
            (30, 5, 10, 64, "batch"),
            (40, 1, 8, 16, "array"),
            (64, 16, 32, 64, "array"),
            (45, 7, 10, 12, "list"),
            (50, 0, 16, 16, "array"),
            (50, 20, 16, 64, "array"),
            (50, 1, 1, 16, "array")):
        vocab = 9
        ids = rng.integers(0, vocab, size=(2, n) if form == "batch" else n)
        ids = ids[None, :] if form == "row" else ids
        kwargs = {} if stride is None else {"stride": stride}
        if max_length is not None:
            kwargs["max_length"] = max_length
        seed = int(rng.integers(1 << 30))

        def call(ids=ids, kwargs=kwargs, vocab=vocab, n_positions=n_positions, seed=seed, form=form) -> object:
            held = ids.tolist() if form == "list" else ids.copy()
            return ns["sliding_window_perplexity"](_ToyLM(vocab, n_positions, seed), held, **kwargs), held

        calls.append(call)
    return calls


# -- Soft-NMS: linear and gaussian score decay, and hard NMS (Bodla et al. 2017) ----------------------------------

SN_SIG = "def soft_nms(boxes, scores, method=\"linear\", iou_threshold=0.3, sigma=0.5, score_threshold=0.001):\n"
SN_BODY = '''    if method not in ("linear", "gaussian", "hard"):
        raise ValueError(f"unknown method {method!r}")
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    scores = np.array(scores, dtype=np.float64).reshape(-1)
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    remaining = np.flatnonzero(scores > score_threshold)
    keep = []
    kept_scores = []
    while remaining.size > 0:
        top = remaining[np.argmax(scores[remaining])]
        keep.append(int(top))
        kept_scores.append(scores[top])
        remaining = remaining[remaining != top]
        xx1 = np.maximum(boxes[top, 0], boxes[remaining, 0])
        yy1 = np.maximum(boxes[top, 1], boxes[remaining, 1])
        xx2 = np.minimum(boxes[top, 2], boxes[remaining, 2])
        yy2 = np.minimum(boxes[top, 3], boxes[remaining, 3])
        inter = np.maximum(xx2 - xx1, 0.0) * np.maximum(yy2 - yy1, 0.0)
        union = areas[top] + areas[remaining] - inter
        iou = np.where(union > 0.0, inter / np.where(union > 0.0, union, 1.0), 0.0)
        if method == "linear":
            weight = np.where(iou > iou_threshold, 1.0 - iou, 1.0)
        elif method == "gaussian":
            weight = np.exp(-(iou * iou) / sigma)
        else:
            weight = np.where(iou > iou_threshold, 0.0, 1.0)
        scores[remaining] *= weight
        remaining = remaining[scores[remaining] > score_threshold]
    return np.array(keep, dtype=np.int64), np.array(kept_scores, dtype=np.float64)
'''
SN_DOC = '''    """Soft-NMS (Bodla, Singh, Chellappa and Davis 2017): a greedy selection that decays the scores of the
    boxes overlapping each selected box rather than removing them.

    ``boxes``: [N, 4] as (x1, y1, x2, y2) with x2 >= x1 and y2 >= y1, continuous coordinates (a box's area is
    ``(x2 - x1) * (y2 - y1)``, no +1); ``scores``: [N]. N may be 0. The IoU of two boxes is their intersection's
    area over their union's, 0 when the union's area is 0.

    Only boxes whose score is above ``score_threshold`` take part: the others are dropped from the start. Then,
    until no box is left: the box of the highest current score (the lowest index among equal scores) is kept, with
    its current score, and leaves the candidates; each remaining box's score is multiplied by a weight of its IoU
    with the kept box, and the boxes whose score is then not above ``score_threshold`` are dropped. The weight is,
    by ``method``: "linear": 1 - IoU where IoU > ``iou_threshold``, else 1; "gaussian": exp(-IoU ** 2 / ``sigma``)
    (``iou_threshold`` unused); "hard": 0 where IoU > ``iou_threshold``, else 1 (plain NMS); any other method
    raises ValueError.

    Returns ``(keep, kept_scores)``: an int64 array of the kept boxes' indices in the order they were kept, and a
    float64 array of their scores when kept. No argument is changed.
    """
'''
SN_GOLDEN = "\n\n" + SN_SIG + SN_DOC + SN_BODY
SN_DRIVER = '''"""Soft-NMS on a toy detector's raw boxes, and the AP it gives: python evaluate_detections.py"""

import numpy as np

from detection.nms import soft_nms

N_IMAGES = 60


def iou_matrix(a, b):
    x1 = np.maximum(a[:, None, 0], b[None, :, 0])
    y1 = np.maximum(a[:, None, 1], b[None, :, 1])
    x2 = np.minimum(a[:, None, 2], b[None, :, 2])
    y2 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / (area_a[:, None] + area_b[None, :] - inter)


def synth_image(rng):
    """Ground-truth objects, some of them overlapping pairs, and a detector's raw output: jittered boxes around
    each object scored by how well they fit, and low-scored false positives."""
    k = int(rng.integers(1, 5))
    xy = rng.uniform(0, 80, size=(k, 2))
    wh = rng.uniform(15, 40, size=(k, 2))
    if k > 1 and rng.random() < 0.5:
        xy[1] = xy[0] + rng.uniform(-0.4, 0.4, size=2) * wh[0]
    gts = np.concatenate([xy, xy + wh], axis=1)
    boxes, scores = [], []
    for gt in gts:
        w, h = gt[2] - gt[0], gt[3] - gt[1]
        jitter = rng.normal(scale=0.12, size=(12, 4)) * np.array([w, h, w, h])
        props = gt + jitter
        props[:, 2:] = np.maximum(props[:, 2:], props[:, :2] + 1.0)
        fit = iou_matrix(props, gt[None])[:, 0]
        boxes.append(props)
        scores.append(np.clip(fit + rng.normal(scale=0.08, size=12), 0.0, 1.0))
    fp_xy = rng.uniform(0, 100, size=(8, 2))
    boxes.append(np.concatenate([fp_xy, fp_xy + rng.uniform(10, 30, size=(8, 2))], axis=1))
    scores.append(rng.uniform(0.0, 0.8, size=8))
    return gts, np.concatenate(boxes), np.concatenate(scores)


def average_precision(detections, n_gt):
    """All-point interpolated AP at IoU 0.5 over (score, is_true_positive) pairs."""
    detections.sort(key=lambda d: -d[0])
    tp = np.cumsum([d[1] for d in detections])
    fp = np.cumsum([1 - d[1] for d in detections])
    recall = tp / n_gt
    precision = tp / np.maximum(tp + fp, 1e-12)
    precision = np.concatenate([[0.0], precision, [0.0]])
    recall = np.concatenate([[0.0], recall, [1.0]])
    for i in range(len(precision) - 2, -1, -1):
        precision[i] = max(precision[i], precision[i + 1])
    changes = np.flatnonzero(recall[1:] != recall[:-1])
    return float(np.sum((recall[changes + 1] - recall[changes]) * precision[changes + 1]))


def main():
    rng = np.random.default_rng(0)
    detections, n_gt, kept_total, raw_total = [], 0, 0, 0
    for image in range(1, N_IMAGES + 1):
        gts, boxes, scores = synth_image(rng)
        keep, new_scores = soft_nms(boxes, scores)
        kept_total += len(keep)
        raw_total += len(boxes)
        n_gt += len(gts)
        matched = np.zeros(len(gts), dtype=bool)
        ious = iou_matrix(boxes[keep], gts) if len(keep) else np.zeros((0, len(gts)))
        for row, score in zip(ious, new_scores):
            best = int(np.argmax(row))
            hit = row[best] >= 0.5 and not matched[best]
            matched[best] |= hit
            detections.append((float(score), int(hit)))
        if image % 20 == 0:
            print(f"{image} images: kept {kept_total} of {raw_total} boxes, AP@0.5 "
                  f"{average_precision(list(detections), n_gt):.4f}")


if __name__ == "__main__":
    main()
'''

_sn = editor(SN_SIG, SN_BODY)

SN_WRONG = {
    "gaussian over 2 sigma squared": _sn("weight = np.exp(-(iou * iou) / sigma)",
                                         "weight = np.exp(-(iou * iou) / (2.0 * sigma * sigma))"),
    "gaussian of the IoU, not its square": _sn("weight = np.exp(-(iou * iou) / sigma)",
                                               "weight = np.exp(-iou / sigma)"),
    "pins sigma": _sn("weight = np.exp(-(iou * iou) / sigma)", "weight = np.exp(-(iou * iou) / 0.5)"),
    "linear decay at every overlap": _sn("weight = np.where(iou > iou_threshold, 1.0 - iou, 1.0)",
                                         "weight = 1.0 - iou"),
    "hard NMS suppresses at the threshold": _sn("weight = np.where(iou > iou_threshold, 0.0, 1.0)",
                                                "weight = np.where(iou >= iou_threshold, 0.0, 1.0)"),
    "boxes at the score threshold kept": _sn(" > score_threshold", " >= score_threshold"),
    "scores not filtered before the first pick": _sn("remaining = np.flatnonzero(scores > score_threshold)",
                                                     "remaining = np.arange(scores.shape[0])"),
    "unknown method taken as hard NMS": _sn('''    if method not in ("linear", "gaussian", "hard"):
        raise ValueError(f"unknown method {method!r}")
''', ""),
    "areas with the +1 pixel convention": _sn(
        "areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])",
        "areas = (boxes[:, 2] - boxes[:, 0] + 1.0) * (boxes[:, 3] - boxes[:, 1] + 1.0)").replace(
        "inter = np.maximum(xx2 - xx1, 0.0) * np.maximum(yy2 - yy1, 0.0)",
        "inter = np.maximum(xx2 - xx1 + 1.0, 0.0) * np.maximum(yy2 - yy1 + 1.0, 0.0)"),
    "caller's scores decayed in place": _sn("scores = np.array(scores, dtype=np.float64).reshape(-1)",
                                            "scores = np.asarray(scores, dtype=np.float64).reshape(-1)"),
}
SN_RIGHT = {
    "box by box in plain floats": SN_SIG + '''    import math

    if method not in {"linear", "gaussian", "hard"}:
        raise ValueError(method)
    b = [[float(c) for c in row] for row in np.asarray(boxes, dtype=float).reshape(-1, 4)]
    s = [float(x) for x in np.asarray(scores, dtype=float).reshape(-1)]
    live = [i for i in range(len(s)) if s[i] > score_threshold]
    keep, kept = [], []
    while live:
        best = live[0]
        for i in live[1:]:
            if s[i] > s[best]:
                best = i
        keep.append(best)
        kept.append(s[best])
        x1, y1, x2, y2 = b[best]
        area = (x2 - x1) * (y2 - y1)
        survivors = []
        for i in live:
            if i == best:
                continue
            ix = max(min(x2, b[i][2]) - max(x1, b[i][0]), 0.0)
            iy = max(min(y2, b[i][3]) - max(y1, b[i][1]), 0.0)
            inter = ix * iy
            union = area + (b[i][2] - b[i][0]) * (b[i][3] - b[i][1]) - inter
            iou = inter / union if union > 0.0 else 0.0
            if method == "linear":
                w = 1.0 - iou if iou > iou_threshold else 1.0
            elif method == "gaussian":
                w = math.exp(-iou * iou / sigma)
            else:
                w = 0.0 if iou > iou_threshold else 1.0
            s[i] *= w
            if s[i] > score_threshold:
                survivors.append(i)
        live = survivors
    return np.array(keep, dtype=np.int64), np.array(kept, dtype=np.float64)
''',
    "IoU matrix up front, candidates by a mask": SN_SIG + '''    decays = {
        "linear": lambda o: np.where(o > iou_threshold, 1.0 - o, 1.0),
        "gaussian": lambda o: np.exp(-np.square(o) / sigma),
        "hard": lambda o: (o <= iou_threshold).astype(float),
    }
    if method not in decays:
        raise ValueError(f"method must be one of {sorted(decays)}")
    bx = np.asarray(boxes, dtype=float).reshape(-1, 4)
    sc = np.asarray(scores, dtype=float).reshape(-1).copy()
    x1, y1, x2, y2 = bx.T
    area = (x2 - x1) * (y2 - y1)
    iw = np.clip(np.minimum(x2[:, None], x2[None, :]) - np.maximum(x1[:, None], x1[None, :]), 0.0, None)
    ih = np.clip(np.minimum(y2[:, None], y2[None, :]) - np.maximum(y1[:, None], y1[None, :]), 0.0, None)
    inter = iw * ih
    union = area[:, None] + area[None, :] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where(union > 0.0, inter / union, 0.0)
    alive = sc > score_threshold
    order, kept = [], []
    while alive.any():
        i = int(np.argmax(np.where(alive, sc, -np.inf)))
        order.append(i)
        kept.append(sc[i])
        alive[i] = False
        sc = np.where(alive, sc * decays[method](iou[i]), sc)
        alive &= sc > score_threshold
    return np.asarray(order, dtype=np.int64), np.asarray(kept, dtype=np.float64)
''',
}


def sn_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general detections: clusters of overlapping boxes in the default linear mode, with another IoU
    threshold and score threshold; gaussian decay with the default sigma and others; hard NMS; boxes whose IoU is
    exactly the threshold, a box whose score is exactly the score threshold (from the start, and left there by a
    weight of 1), every score below the threshold, a top box below it, degenerate boxes of zero area, integer
    boxes as lists, one box, no box, and an unknown method. Each gives both results and the arguments as the
    caller holds them afterwards."""
    rng = np.random.default_rng(163)

    def cluster(n_objects, per_object, spread=0.15):
        xy = rng.uniform(0, 60, size=(n_objects, 2))
        wh = rng.uniform(10, 30, size=(n_objects, 2))
        out_boxes, out_scores = [], []
        for (x, y), (w, h) in zip(xy, wh, strict=True):
            jit = rng.normal(scale=spread, size=(per_object, 4)) * np.array([w, h, w, h])
            b = np.array([x, y, x + w, y + h]) + jit
            b[:, 2:] = np.maximum(b[:, 2:], b[:, :2] + 0.5)
            out_boxes.append(b)
            out_scores.append(rng.uniform(0.05, 1.0, size=per_object))
        return np.concatenate(out_boxes), np.concatenate(out_scores)

    exact_boxes = np.array([[0.0, 0.0, 3.0, 1.0], [1.0, 0.0, 4.0, 1.0], [10.0, 10.0, 12.0, 12.0],
                            [0.0, 0.0, 2.0, 2.0], [1.0, 0.0, 3.0, 2.0], [20.0, 20.0, 21.0, 25.0]])
    exact_scores = np.array([0.9, 0.8, 0.1, 0.7, 0.6, 0.05])
    cases: list[tuple[Any, Any, dict[str, Any]]] = [
        (*cluster(3, 6), {}),
        (*cluster(4, 5, 0.25), {"iou_threshold": 0.5, "score_threshold": 0.2}),
        (*cluster(3, 6), {"method": "gaussian"}),
        (*cluster(3, 5), {"method": "gaussian", "sigma": 0.3, "score_threshold": 0.05}),
        (*cluster(2, 7, 0.1), {"method": "gaussian", "sigma": 1.2}),
        (*cluster(3, 6), {"method": "hard", "iou_threshold": 0.4}),
        (exact_boxes, exact_scores, {"method": "hard", "iou_threshold": 0.5}),
        (exact_boxes, exact_scores, {"method": "linear", "iou_threshold": 1.0 / 3.0, "score_threshold": 0.1}),
        (exact_boxes, exact_scores, {"method": "gaussian", "score_threshold": 0.05}),
        (exact_boxes, np.array([0.0005, 0.0002, 0.0009, 0.0001, 0.0003, 0.0008]), {}),
        (exact_boxes, np.array([0.05, 0.3, 0.2, 0.25, 0.6, 0.4]), {"score_threshold": 0.1, "method": "hard"}),
        (np.array([[5.0, 5.0, 5.0, 5.0], [5.0, 5.0, 5.0, 5.0], [0.0, 0.0, 4.0, 4.0], [1.0, 1.0, 1.0, 3.0]]),
         np.array([0.9, 0.8, 0.7, 0.6]), {"method": "gaussian", "sigma": 0.2}),
        ([[0, 0, 10, 10], [2, 2, 12, 12], [1, 0, 11, 10], [30, 30, 40, 40]], [0.8, 0.75, 0.7, 0.6], {}),
        (np.array([[1.0, 2.0, 3.0, 4.0]]), np.array([0.5]), {"method": "gaussian"}),
        (np.zeros((0, 4)), np.zeros(0), {}),
        (*cluster(2, 3), {"method": "greedy"}),
    ]
    calls: list[Callable[[], object]] = []
    for boxes, scores, kwargs in cases:

        def call(boxes=boxes, scores=scores, kwargs=kwargs) -> object:
            held_boxes = boxes if isinstance(boxes, list) else boxes.copy()
            held_scores = scores if isinstance(scores, list) else scores.copy()
            return ns["soft_nms"](held_boxes, held_scores, **kwargs), held_boxes, held_scores

        calls.append(call)
    return calls


_NP = "import numpy as np\n\n\n"
_RE_NP = "import re\n\nimport numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "48-VTrace", "files": {"impala/__init__.py": "", "impala/vtrace.py":
     '"""Off-policy corrections for actor-learner training."""\n\nimport numpy as np\n' + VT_GOLDEN,
     "train.py": VT_DRIVER},
     "function": "impala/vtrace.py::vtrace", "command": "python train.py",
     "head": _NP, "wrong": VT_WRONG, "right": VT_RIGHT, "check": vt_check,
     "gaps": {"traces truncated at rho_bar": ["c_bar", "np.minimum(c_bar, rhos)"],
              "lambda ignored": ["lambda_"],
              "lambda inside the clip": ["lambda_", "lambda_ * (rhos if c_bar is None else np.minimum(c_bar, rhos))"],
              "advantages weighted by the rho_bar weights": ["pg_rho_bar", "np.minimum(pg_rho_bar, rhos)"],
              "None thresholds not handled": ["rhos if rho_bar is None", "rhos if c_bar is None",
                                              "rhos if pg_rho_bar is None"],
              "trace not cut at done flags": ["dones", "discounts[t] * cs[t] * acc"],
              "advantages bootstrapped from the values": ["vs_tp1", "discounts * vs_tp1"],
              "next values stacked with np.vstack": ["np.concatenate([values[1:], bootstrap_value[None]], axis=0)",
                                                     "np.concatenate([vs[1:], bootstrap_value[None]], axis=0)"],
              "first step left out of the backward pass": ["reversed(range(values.shape[0]))"],
              "done flags negated with ~": ["dones", "gamma * (1.0 - np.asarray(dones, dtype=np.float64))"]}},
    {"name": "49-LambStep", "files": {"lamb/__init__.py": "", "lamb/optim.py":
     '"""Layer-wise adaptive large-batch optimisers."""\n\nimport re\n\nimport numpy as np\n' + LB_GOLDEN,
     "train.py": LB_DRIVER},
     "function": "lamb/optim.py::Lamb.step", "command": "python train.py",
     "head": _RE_NP, "wrong": LB_WRONG, "right": LB_RIGHT, "check": lb_check,
     "gaps": {"bias_correction flag ignored": ["bias_correction"],
              "eps inside the square root": ["eps", 'np.sqrt(v_hat) + d["eps"]'],
              "weight-decay exclusions ignored": ["exclude_from_weight_decay",
                                                  "any(re.search(pattern, name) for pattern in decay_excluded)"],
              "layer-adaptation exclusions without the fallback": ["exclude_from_layer_adaptation",
                                                                   "adapt_excluded = decay_excluded"],
              "zero-norm guard dropped": ["w_norm > 0.0 and u_norm > 0.0"],
              "only the weight norm guarded": ["u_norm > 0.0"],
              "max_trust_ratio ignored": ["max_trust_ratio"],
              "exclusions matched as whole names": ["re.search(pattern, name)"],
              "weight decay outside the trust ratio": ['update = update + d["weight_decay"] * p',
                                                       'p -= d["lr"] * ratio * update'],
              "parameter without a gradient taken as zero": ["grads", "if g is None:"]}},
    {"name": "50-SlidingPerplexity", "files": {"lmeval/__init__.py": "", "lmeval/ngram.py": PL_NGRAM,
     "lmeval/perplexity.py": '"""Evaluation of language models on long texts."""\n\nimport numpy as np\n'
     + PL_GOLDEN, "evaluate.py": PL_DRIVER},
     "function": "lmeval/perplexity.py::sliding_window_perplexity", "command": "python evaluate.py",
     "head": _NP, "wrong": PL_WRONG, "right": PL_RIGHT, "check": pl_check,
     "gaps": {"windows averaged, not weighted by tokens scored": ["nll_sum -= float(picked[scored].sum())",
                                                                 "mean_nll = nll_sum / n_scored"],
              "target length taken as the stride after the first window": ["trg_len = end - prev_end"],
              "loop not stopped at the end": ["if end == seq_len:"],
              "first label of each window counted": ["n_scored += int(scored.sum())"],
              "max_length argument ignored": ["max_length"],
              "stride not checked against the window": ["stride", "not 1 <= stride <= max_length"],
              "scored tokens counted as n - 1": ["stride", "n_scored += int(scored.sum())"],
              "several sequences flattened into one": ["token_ids", "ids.shape[0] != 1"],
              "tail window dropped": ["range(0, seq_len, stride)"]}},
    {"name": "51-SoftNMS", "files": {"detection/__init__.py": "", "detection/nms.py":
     '"""Non-maximum suppression of detections."""\n\nimport numpy as np\n' + SN_GOLDEN,
     "evaluate_detections.py": SN_DRIVER},
     "function": "detection/nms.py::soft_nms", "command": "python evaluate_detections.py",
     "head": _NP, "wrong": SN_WRONG, "right": SN_RIGHT, "check": sn_check,
     "gaps": {"gaussian over 2 sigma squared": ["sigma", "np.exp(-(iou * iou) / sigma)"],
              "gaussian of the IoU, not its square": ["method", "np.exp(-(iou * iou) / sigma)"],
              "pins sigma": ["sigma"],
              "linear decay at every overlap": ["iou_threshold", "np.where(iou > iou_threshold, 1.0 - iou, 1.0)"],
              "hard NMS suppresses at the threshold": ["iou_threshold",
                                                       "np.where(iou > iou_threshold, 0.0, 1.0)"],
              "boxes at the score threshold kept": ["score_threshold", "> score_threshold"],
              "scores not filtered before the first pick": ["score_threshold",
                                                            "np.flatnonzero(scores > score_threshold)"],
              "unknown method taken as hard NMS": ["method", 'if method not in ("linear", "gaussian", "hard"):'],
              "areas with the +1 pixel convention": [
                  "areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])",
                  "inter = np.maximum(xx2 - xx1, 0.0) * np.maximum(yy2 - yy1, 0.0)"],
              "caller's scores decayed in place": ["scores", "np.array(scores, dtype=np.float64)"]}},
]
"""The twelfth fresh held-out tasks."""
