"""A sixteenth held-out set for ``wrong_answers.py --set fresh15``: four numpy tasks of shapes that no other set
nor any test fixture has. The first is the preference loss of direct preference optimisation (Rafailov et al. 2023)
as a trainer's method reading ``self.cfg.loss``: the implicit reward margin ``h`` of each chosen and rejected pair
against a frozen reference model, the DPO loss with cDPO's ``label_smoothing`` computed stably, SLiC's hinge and
IPO's squared loss by ``loss_type``, a ``reference_free`` flag, per-pair ``weights`` and the rewards ``beta *
(policy - reference)``; the driver trains a toy policy over canned responses with the default config (beta 0.1,
"sigmoid", no smoothing, a reference), never another loss type, smoothing, weights nor margins large enough to
overflow a naive log-sigmoid. The second is the vector-quantisation bottleneck of VQ-VAE (van den Oord et al. 2017)
with its codebook learned by exponential moving averages: nearest codes, the commitment loss, the EMA cluster sizes
and code sums updated in place while ``self.training``, Laplace-smoothed cluster sizes, the codebook rewritten in
place, the perplexity of the code usage, and a ``mask`` of positions left out of the loss and the statistics; the
driver fits the codebook to a toy encoder's latents in training mode with the default decay, commitment cost and
eps, never in eval mode nor with a mask. The third is gradual magnitude pruning (Zhu and Gupta 2018), called once
per training step: the cubic sparsity schedule from ``initial_sparsity`` to ``final_sparsity`` every ``frequency``
steps from ``begin_step`` to ``end_step``, the smallest-magnitude weights of each tensor (or of all together when
``scope`` is "global") pruned, masks that only ever lose weights, 1-D tensors skipped and the model's own arrays
zeroed in place; the driver trains a small MLP with the default config (from 0 to 0.8, per layer), masking its own
gradients, never with another scope, a nonzero initial sparsity or a one-step schedule. The fourth is the priority
update of proportional prioritized replay (Schaul et al. 2016) on a sum tree and a min tree: priorities ``|td| +
eps`` raised to ``alpha`` in the leaves, every ancestor recomputed, duplicates the last one counting, the running
``max_priority``, and the checks of sizes and indices; the driver runs Q-learning with replay on a random MDP with
the default alpha and eps, never with an index out of range, unequal sizes, an empty update nor a TD error of zero.
Written before its first run, and kept out of tests/.

Each task has the keys of ``wrong_answer_tasks.py``: ``files``, ``function``, ``command``, ``head``, ``wrong``,
``right``, ``check`` and ``gaps``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
from corpus_edits import editor

# -- Direct preference optimisation (Rafailov et al. 2023), with cDPO, SLiC's hinge and IPO -----------------------

DP_HEAD = '''class DPOTrainer:
    """Direct preference optimisation ("Direct Preference Optimization: Your Language Model is Secretly a Reward
    Model") and two of its variants, from sequence log-probabilities of the policy and of a frozen reference
    model. ``self.cfg.loss`` holds ``beta``, ``loss_type`` ("sigmoid": DPO, with the conservative label smoothing
    of cDPO; "hinge": SLiC's hinge; "ipo": IPO's squared loss), ``label_smoothing`` and ``reference_free`` (an
    implicit reference that gives every sequence the log-probability 0)."""

    def __init__(self, cfg):
        self.cfg = cfg

    def dpo_loss(self, policy_chosen_logps, policy_rejected_logps, reference_chosen_logps,
                 reference_rejected_logps, weights=None):
'''
DP_BODY = '''        c = self.cfg.loss
        if c.beta <= 0:
            raise ValueError(f"beta must be positive, got {c.beta}")
        if c.loss_type not in ("sigmoid", "hinge", "ipo"):
            raise ValueError(f"unknown loss_type {c.loss_type!r}")
        if not 0.0 <= c.label_smoothing < 0.5:
            raise ValueError(f"label_smoothing must be in [0, 0.5), got {c.label_smoothing}")
        beta = c.beta
        pi_chosen = np.asarray(policy_chosen_logps, dtype=np.float64)
        pi_rejected = np.asarray(policy_rejected_logps, dtype=np.float64)
        if c.reference_free:
            ref_chosen = np.zeros_like(pi_chosen)
            ref_rejected = np.zeros_like(pi_rejected)
        else:
            ref_chosen = np.asarray(reference_chosen_logps, dtype=np.float64)
            ref_rejected = np.asarray(reference_rejected_logps, dtype=np.float64)
        h = (pi_chosen - pi_rejected) - (ref_chosen - ref_rejected)
        if c.loss_type == "sigmoid":
            losses = ((1.0 - c.label_smoothing) * np.logaddexp(0.0, -beta * h)
                      + c.label_smoothing * np.logaddexp(0.0, beta * h))
        elif c.loss_type == "hinge":
            losses = np.maximum(0.0, 1.0 - beta * h)
        else:
            losses = (h - 1.0 / (2.0 * beta)) ** 2
        chosen_rewards = beta * (pi_chosen - ref_chosen)
        rejected_rewards = beta * (pi_rejected - ref_rejected)
        if weights is None:
            loss = float(losses.mean())
        else:
            w = np.asarray(weights, dtype=np.float64)
            total = float(w.sum())
            loss = float((w * losses).sum()) / total if total > 0 else 0.0
        return loss, chosen_rewards, rejected_rewards
'''
DP_DOC = '''        """The preference loss of a batch of pairs, and the implicit rewards.

        The four log-probability arguments: float arrays (N,), N >= 1, each pair's chosen and rejected responses'
        summed log-probabilities under the policy and under the reference model; ``weights``: None, or an array
        (N,) of non-negative per-pair weights. Settings, read from ``self.cfg.loss``: ``beta`` (> 0, else
        ValueError), ``loss_type`` (one of "sigmoid", "hinge", "ipo", else ValueError), ``label_smoothing`` (in
        [0, 0.5), else ValueError; the checks come in that order) and ``reference_free``.

        With ``reference_free`` the reference log-probabilities are taken as 0, in the loss and in the rewards.
        Each pair's margin ``h = (pi_chosen - pi_rejected) - (ref_chosen - ref_rejected)``; its loss by
        ``loss_type``: "sigmoid", ``-(1 - ls) * log sigmoid(beta * h) - ls * log sigmoid(-beta * h)`` with ls the
        ``label_smoothing``, computed stably for h of any size; "hinge", ``max(0, 1 - beta * h)``; "ipo", ``(h - 1
        / (2 * beta)) ** 2``. The loss is the mean over the pairs or, with ``weights``, their weighted mean
        ``sum(w * loss) / sum(w)``, 0.0 when the weights sum to 0.

        Returns ``(loss, chosen_rewards, rejected_rewards)``: a float, and the float64 arrays (N,) ``beta *
        (pi_chosen - ref_chosen)`` and ``beta * (pi_rejected - ref_rejected)``. No argument is changed.
        """
'''
DP_GOLDEN = "\n\n" + DP_HEAD + DP_DOC + DP_BODY
DP_CONFIG = '''"""Experiment configuration."""

from dataclasses import dataclass, field


@dataclass
class LossConfig:
    beta: float = 0.1
    loss_type: str = "sigmoid"
    label_smoothing: float = 0.0
    reference_free: bool = False


@dataclass
class TrainConfig:
    features: int = 8
    responses: int = 10
    batch_size: int = 32
    steps: int = 150
    lr: float = 2.0
    loss: LossConfig = field(default_factory=LossConfig)
'''
DP_DRIVER = '''"""Align a toy policy over canned responses to pairwise preferences with DPO, against the frozen initial
policy as the reference: python train_dpo.py"""

import numpy as np

from prefopt.config import TrainConfig
from prefopt.dpo import DPOTrainer


def log_softmax(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def main():
    rng = np.random.default_rng(0)
    cfg = TrainConfig()
    trainer = DPOTrainer(cfg)
    w = rng.normal(scale=0.3, size=(cfg.features, cfg.responses))
    w_ref = w.copy()
    true_reward = rng.normal(size=(cfg.features, cfg.responses))
    rows = np.arange(cfg.batch_size)
    for step in range(1, cfg.steps + 1):
        x = rng.normal(size=(cfg.batch_size, cfg.features))
        a = rng.integers(0, cfg.responses, size=cfg.batch_size)
        b = (a + rng.integers(1, cfg.responses, size=cfg.batch_size)) % cfg.responses
        scores = x @ true_reward
        prefer_a = scores[rows, a] >= scores[rows, b]
        chosen = np.where(prefer_a, a, b)
        rejected = np.where(prefer_a, b, a)
        logp = log_softmax(x @ w)
        ref_logp = log_softmax(x @ w_ref)
        loss, chosen_rewards, rejected_rewards = trainer.dpo_loss(
            logp[rows, chosen], logp[rows, rejected], ref_logp[rows, chosen], ref_logp[rows, rejected])
        margin = (logp[rows, chosen] - logp[rows, rejected]) - (ref_logp[rows, chosen] - ref_logp[rows, rejected])
        beta = cfg.loss.beta
        coef = -beta / (1.0 + np.exp(beta * margin)) / cfg.batch_size
        grad_logits = np.zeros((cfg.batch_size, cfg.responses))
        grad_logits[rows, chosen] += coef
        grad_logits[rows, rejected] -= coef
        w -= cfg.lr * x.T @ grad_logits
        if step % 25 == 0:
            accuracy = float(np.mean(chosen_rewards > rejected_rewards))
            print(f"step {step}: loss {loss:.4f}, reward accuracy {accuracy:.3f}, "
                  f"mean margin {float(np.mean(chosen_rewards - rejected_rewards)):.4f}")


if __name__ == "__main__":
    main()
'''

_dp = editor(DP_HEAD, DP_BODY)
_DP_SIGMOID = '''            losses = ((1.0 - c.label_smoothing) * np.logaddexp(0.0, -beta * h)
                      + c.label_smoothing * np.logaddexp(0.0, beta * h))
'''

DP_WRONG = {
    "pins beta": _dp("        beta = c.beta\n", "        beta = 0.1\n"),
    "label smoothing ignored": _dp(_DP_SIGMOID, "            losses = np.logaddexp(0.0, -beta * h)\n"),
    "label smoothing of one half accepted": _dp("if not 0.0 <= c.label_smoothing < 0.5:",
                                                "if not 0.0 <= c.label_smoothing <= 0.5:"),
    "reference_free ignored": _dp('''        if c.reference_free:
            ref_chosen = np.zeros_like(pi_chosen)
            ref_rejected = np.zeros_like(pi_rejected)
        else:
            ref_chosen = np.asarray(reference_chosen_logps, dtype=np.float64)
            ref_rejected = np.asarray(reference_rejected_logps, dtype=np.float64)
''', '''        ref_chosen = np.asarray(reference_chosen_logps, dtype=np.float64)
        ref_rejected = np.asarray(reference_rejected_logps, dtype=np.float64)
'''),
    "hinge without its margin": _dp("losses = np.maximum(0.0, 1.0 - beta * h)", "losses = np.maximum(0.0, -beta * h)"),
    "IPO with beta on the margin": _dp("losses = (h - 1.0 / (2.0 * beta)) ** 2",
                                       "losses = (beta * h - 1.0 / (2.0 * beta)) ** 2"),
    "weights ignored": _dp('''        if weights is None:
            loss = float(losses.mean())
        else:
            w = np.asarray(weights, dtype=np.float64)
            total = float(w.sum())
            loss = float((w * losses).sum()) / total if total > 0 else 0.0
''', '''        loss = float(losses.mean())
'''),
    "naive log-sigmoid": _dp(_DP_SIGMOID, '''            losses = (-(1.0 - c.label_smoothing)
                      * np.log(1.0 / (1.0 + np.exp(-beta * h)))
                      - c.label_smoothing * np.log(1.0 / (1.0 + np.exp(beta * h))))
'''),
    "rewards without beta": _dp('''        chosen_rewards = beta * (pi_chosen - ref_chosen)
        rejected_rewards = beta * (pi_rejected - ref_rejected)
''', '''        chosen_rewards = pi_chosen - ref_chosen
        rejected_rewards = pi_rejected - ref_rejected
'''),
    "reference log-ratio added": _dp("h = (pi_chosen - pi_rejected) - (ref_chosen - ref_rejected)",
                                     "h = (pi_chosen - pi_rejected) + (ref_chosen - ref_rejected)"),
}
DP_RIGHT = {
    "pair by pair with math": DP_HEAD + '''        import math

        cfg = self.cfg.loss
        if not cfg.beta > 0:
            raise ValueError("beta")
        if cfg.loss_type not in {"sigmoid", "hinge", "ipo"}:
            raise ValueError("loss_type")
        if cfg.label_smoothing < 0 or cfg.label_smoothing >= 0.5:
            raise ValueError("label_smoothing")
        b = float(cfg.beta)
        pc = [float(v) for v in np.ravel(policy_chosen_logps)]
        pr = [float(v) for v in np.ravel(policy_rejected_logps)]
        n = len(pc)
        if cfg.reference_free:
            rc, rr = [0.0] * n, [0.0] * n
        else:
            rc = [float(v) for v in np.ravel(reference_chosen_logps)]
            rr = [float(v) for v in np.ravel(reference_rejected_logps)]

        def softplus(x):
            return max(x, 0.0) + math.log1p(math.exp(-abs(x)))

        per = []
        for i in range(n):
            h = (pc[i] - pr[i]) - (rc[i] - rr[i])
            if cfg.loss_type == "sigmoid":
                ls = cfg.label_smoothing
                per.append((1 - ls) * softplus(-b * h) + ls * softplus(b * h))
            elif cfg.loss_type == "hinge":
                per.append(max(0.0, 1.0 - b * h))
            else:
                per.append((h - 0.5 / b) ** 2)
        if weights is None:
            loss = sum(per) / n
        else:
            ws = [float(v) for v in np.ravel(weights)]
            tot = sum(ws)
            loss = sum(wi * li for wi, li in zip(ws, per)) / tot if tot > 0 else 0.0
        chosen = np.array([b * (pc[i] - rc[i]) for i in range(n)], dtype=float)
        rejected = np.array([b * (pr[i] - rr[i]) for i in range(n)], dtype=float)
        return float(loss), chosen, rejected
''',
    "table of losses, softplus by abs": DP_HEAD + '''        conf = self.cfg.loss
        if conf.beta <= 0:
            raise ValueError("beta must be positive")
        if conf.loss_type not in ("ipo", "hinge", "sigmoid"):
            raise ValueError("unknown loss type")
        ls = conf.label_smoothing
        if ls < 0.0 or ls >= 0.5:
            raise ValueError("bad label smoothing")
        beta = conf.beta

        def softplus(x):
            return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))

        pol_c = np.asarray(policy_chosen_logps, dtype=float)
        pol_r = np.asarray(policy_rejected_logps, dtype=float)
        ref_c = 0.0 if conf.reference_free else np.asarray(reference_chosen_logps, dtype=float)
        ref_r = 0.0 if conf.reference_free else np.asarray(reference_rejected_logps, dtype=float)
        chosen_logratio = pol_c - ref_c
        rejected_logratio = pol_r - ref_r
        margin = (pol_c - pol_r) - (ref_c - ref_r)
        table = {
            "sigmoid": lambda: (1.0 - ls) * softplus(-beta * margin) + ls * softplus(beta * margin),
            "hinge": lambda: np.clip(1.0 - beta * margin, 0.0, None),
            "ipo": lambda: np.square(margin - 1.0 / (2.0 * beta)),
        }
        losses = table[conf.loss_type]()
        w = np.ones_like(losses) if weights is None else np.asarray(weights, dtype=float)
        denom = w.sum()
        loss = float(np.dot(w, losses) / denom) if denom > 0 else 0.0
        return loss, beta * chosen_logratio, beta * rejected_logratio
''',
}


def dp_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general batches: the default config; another beta; label smoothing of 0.2, of 0.5 and negative;
    the reference-free form with each loss type; the hinge with margins on both sides of 1 / beta; IPO with
    another beta and with weights; weights of their own, and weights that sum to 0; margins large enough to
    overflow a naive log-sigmoid either way; a beta of 0 and an unknown loss type. Each gives the loss, the
    rewards and the arguments as the caller holds them afterwards."""
    rng = np.random.default_rng(151)

    def config(beta=0.1, loss_type="sigmoid", label_smoothing=0.0, reference_free=False):
        return SimpleNamespace(loss=SimpleNamespace(beta=beta, loss_type=loss_type, label_smoothing=label_smoothing,
                                                    reference_free=reference_free))

    def batch(n, scale):
        return [-20.0 + scale * rng.normal(size=n) for _ in range(4)]

    plain = batch(6, 4.0)
    wide = batch(7, 9.0)
    huge = [np.array([-10.0, -9000.0, -20.0]), np.array([-9000.0, -10.0, -21.0]),
            np.array([-12.0, -15.0, -20.5]), np.array([-14.0, -11.0, -20.0])]
    weights = rng.uniform(0.0, 2.0, size=6)
    cases: list[tuple[SimpleNamespace, list[np.ndarray], np.ndarray | None]] = [
        (config(), plain, None),
        (config(beta=0.5), wide, None),
        (config(label_smoothing=0.2), plain, None),
        (config(beta=0.3, label_smoothing=0.1), wide, None),
        (config(label_smoothing=0.5), plain, None),
        (config(label_smoothing=-0.1), plain, None),
        (config(reference_free=True), plain, None),
        (config(beta=0.2, loss_type="hinge", reference_free=True), wide, None),
        (config(beta=0.25, loss_type="ipo", reference_free=True), plain, None),
        (config(beta=0.2, loss_type="hinge"), wide, None),
        (config(beta=0.05, loss_type="hinge"), plain, None),
        (config(beta=0.25, loss_type="ipo"), wide, None),
        (config(beta=0.5, loss_type="ipo"), plain, weights),
        (config(), plain, weights),
        (config(label_smoothing=0.3), plain, np.array([0.0, 1.0, 0.0, 3.0, 0.5, 0.0])),
        (config(), plain, np.zeros(6)),
        (config(), huge, None),
        (config(beta=1.0, label_smoothing=0.2), huge, None),
        (config(beta=0.0), plain, None),
        (config(loss_type="kto"), plain, None),
    ]
    calls: list[Callable[[], object]] = []
    for cfg, logps, w in cases:

        def call(cfg=cfg, logps=logps, w=w) -> object:
            held = [x.copy() for x in logps]
            held_w = None if w is None else w.copy()
            out = ns["DPOTrainer"](cfg).dpo_loss(*held, weights=held_w)
            return out, held, held_w

        calls.append(call)
    return calls


# -- The EMA codebook of VQ-VAE (van den Oord et al. 2017) --------------------------------------------------------

VQ_HEAD = '''class VectorQuantizerEMA:
    """The vector-quantisation bottleneck of VQ-VAE ("Neural Discrete Representation Learning") with its codebook
    learned by exponential moving averages instead of a codebook loss: ``self.codebook`` (K, dim), with
    ``self.ema_cluster_size`` (K,) and ``self.ema_w`` (K, dim), the moving averages of each code's count and of
    the sum of the vectors assigned to it (starting as one vector, the code itself), all updated in place while
    ``self.training``."""

    def __init__(self, num_codes=32, dim=8, decay=0.99, commitment_cost=0.25, eps=1e-5, seed=0):
        rng = np.random.default_rng(seed)
        self.codebook = rng.normal(size=(num_codes, dim))
        self.ema_cluster_size = np.ones(num_codes)
        self.ema_w = self.codebook.copy()
        self.decay = decay
        self.commitment_cost = commitment_cost
        self.eps = eps
        self.training = True

    def forward(self, z, mask=None):
'''
VQ_BODY = '''        z = np.asarray(z, dtype=np.float64)
        num_codes, dim = self.codebook.shape
        if z.shape[-1] != dim:
            raise ValueError(f"expected vectors of size {dim}, got {z.shape[-1]}")
        flat = z.reshape(-1, dim)
        if mask is None:
            valid = np.ones(flat.shape[0], dtype=bool)
        else:
            valid = np.asarray(mask, dtype=bool).reshape(-1)
        distances = (np.sum(flat ** 2, axis=1, keepdims=True) - 2.0 * flat @ self.codebook.T
                     + np.sum(self.codebook ** 2, axis=1))
        codes = np.argmin(distances, axis=1)
        quantized = self.codebook[codes]
        n_valid = int(valid.sum())
        if n_valid:
            loss = self.commitment_cost * float(np.mean((quantized[valid] - flat[valid]) ** 2))
        else:
            loss = 0.0
        encodings = np.zeros((flat.shape[0], num_codes))
        encodings[np.arange(flat.shape[0]), codes] = 1.0
        encodings = encodings[valid]
        counts = encodings.sum(axis=0)
        if self.training:
            self.ema_cluster_size *= self.decay
            self.ema_cluster_size += (1.0 - self.decay) * counts
            self.ema_w *= self.decay
            self.ema_w += (1.0 - self.decay) * (encodings.T @ flat[valid])
            n = self.ema_cluster_size.sum()
            cluster_size = (self.ema_cluster_size + self.eps) / (n + num_codes * self.eps) * n
            self.codebook[...] = self.ema_w / cluster_size[:, None]
        avg_probs = counts / max(n_valid, 1)
        perplexity = float(np.exp(-np.sum(avg_probs * np.log(avg_probs + 1e-10))))
        out = flat + (quantized - flat)
        return out.reshape(z.shape), loss, codes.reshape(z.shape[:-1]), perplexity
'''
VQ_DOC = '''        """Quantise a batch of vectors to their nearest codes and, in training, move the codebook.

        ``z``: a float array (..., dim), dim the codebook's (else ValueError); ``mask``: None, or a bool array of
        z's leading shape, True at the positions that count. Settings, read from ``self``: ``decay``,
        ``commitment_cost``, ``eps`` and ``training``.

        Each vector's code is the index of the codebook row nearest in Euclidean distance, and its quantised vector
        that row of the codebook as it was before this call. The loss is ``commitment_cost`` times the mean, over
        the counted positions and the dim features, of ``(quantised - z) ** 2``; 0.0 when no position counts.

        While ``self.training``, with ``counts[k]`` the number of counted positions whose code is k and ``sums[k]``
        the sum of their vectors: ``ema_cluster_size = decay * ema_cluster_size + (1 - decay) * counts``,
        ``ema_w = decay * ema_w + (1 - decay) * sums``, then with n the sum of ``ema_cluster_size`` the Laplace-
        smoothed sizes ``(ema_cluster_size + eps) / (n + K * eps) * n``, and every codebook row becomes its row of
        ``ema_w`` divided by its smoothed size. The three arrays are changed in place; nothing changes out of
        training.

        The perplexity is ``exp(-sum_k p_k * log(p_k + 1e-10))`` with ``p_k = counts[k] / max(number counted, 1)``.

        Returns ``(quantized, loss, codes, perplexity)``: the quantised vectors, float64 of z's shape (the
        straight-through ``z + (quantised - z)``); the loss, a float; the codes, ints of z's leading shape; the
        perplexity, a float. ``z`` and ``mask`` are not changed.
        """
'''
VQ_GOLDEN = "\n\n" + VQ_HEAD + VQ_DOC + VQ_BODY
VQ_DRIVER = '''"""Fit a VQ-VAE bottleneck's codebook, by its moving averages, to the latents of a toy encoder:
python train_vq.py"""

import numpy as np

from vqvae.quantizer import VectorQuantizerEMA

N_CLUSTERS = 12
DIM = 8
CODES = 32
BATCH = 16
SEQ = 10
STEPS = 120


def main():
    rng = np.random.default_rng(0)
    centres = 2.0 * rng.normal(size=(N_CLUSTERS, DIM))
    vq = VectorQuantizerEMA(num_codes=CODES, dim=DIM)
    for step in range(1, STEPS + 1):
        which = rng.integers(0, N_CLUSTERS, size=(BATCH, SEQ))
        z = centres[which] + 0.3 * rng.normal(size=(BATCH, SEQ, DIM))
        quantized, loss, codes, perplexity = vq.forward(z)
        if step % 20 == 0:
            used = len(np.unique(codes))
            error = float(np.mean((quantized - z) ** 2))
            print(f"step {step}: commitment loss {loss:.4f}, error {error:.4f}, codes used {used}, "
                  f"perplexity {perplexity:.2f}")


if __name__ == "__main__":
    main()
'''

_vq = editor(VQ_HEAD, VQ_BODY)
_VQ_QUANTIZE = '''        quantized = self.codebook[codes]
        n_valid = int(valid.sum())
        if n_valid:
            loss = self.commitment_cost * float(np.mean((quantized[valid] - flat[valid]) ** 2))
        else:
            loss = 0.0
'''
_VQ_COUNTED = "        n_valid = int(valid.sum())\n"
_VQ_NEAREST = '''        distances = (np.sum(flat ** 2, axis=1, keepdims=True) - 2.0 * flat @ self.codebook.T
                     + np.sum(self.codebook ** 2, axis=1))
        codes = np.argmin(distances, axis=1)
'''
_VQ_TRAIN = '''        if self.training:
            self.ema_cluster_size *= self.decay
            self.ema_cluster_size += (1.0 - self.decay) * counts
            self.ema_w *= self.decay
            self.ema_w += (1.0 - self.decay) * (encodings.T @ flat[valid])
            n = self.ema_cluster_size.sum()
            cluster_size = (self.ema_cluster_size + self.eps) / (n + num_codes * self.eps) * n
            self.codebook[...] = self.ema_w / cluster_size[:, None]
'''

VQ_WRONG = {
    "pins decay": VQ_HEAD + VQ_BODY.replace("self.decay", "0.99"),
    "pins commitment_cost": _vq("loss = self.commitment_cost * float(", "loss = 0.25 * float("),
    "updates out of training": _vq(_VQ_TRAIN, '''        self.ema_cluster_size *= self.decay
        self.ema_cluster_size += (1.0 - self.decay) * counts
        self.ema_w *= self.decay
        self.ema_w += (1.0 - self.decay) * (encodings.T @ flat[valid])
        n = self.ema_cluster_size.sum()
        cluster_size = (self.ema_cluster_size + self.eps) / (n + num_codes * self.eps) * n
        self.codebook[...] = self.ema_w / cluster_size[:, None]
'''),
    "mask ignored in the codebook statistics": _vq("        encodings = encodings[valid]\n", "").replace(
        "(encodings.T @ flat[valid])", "(encodings.T @ flat)"),
    "loss over every position": _vq(
        "loss = self.commitment_cost * float(np.mean((quantized[valid] - flat[valid]) ** 2))",
        "loss = self.commitment_cost * float(np.mean((quantized - flat) ** 2))"),
    "no guard for a batch with nothing counted": _vq(_VQ_QUANTIZE, '''        quantized = self.codebook[codes]
        n_valid = int(valid.sum())
        loss = self.commitment_cost * float(np.mean((quantized[valid] - flat[valid]) ** 2))
'''),
    "quantised by the updated codebook": VQ_HEAD + VQ_BODY.replace(_VQ_QUANTIZE, _VQ_COUNTED).replace(
        _VQ_TRAIN, _VQ_TRAIN + _VQ_QUANTIZE.replace(_VQ_COUNTED, "")),
    "no Laplace smoothing": _vq(
        "cluster_size = (self.ema_cluster_size + self.eps) / (n + num_codes * self.eps) * n",
        "cluster_size = self.ema_cluster_size + self.eps"),
    "codes by the largest dot product": _vq(_VQ_NEAREST, '''        codes = np.argmax(flat @ self.codebook.T, axis=1)
'''),
    "commitment summed over each vector": _vq(
        "float(np.mean((quantized[valid] - flat[valid]) ** 2))",
        "float(np.mean(np.sum((quantized[valid] - flat[valid]) ** 2, axis=1)))"),
}
VQ_RIGHT = {
    "vector by vector loops": VQ_HEAD + '''        import math

        z = np.array(z, dtype=float)
        K, D = self.codebook.shape
        if z.shape[-1] != D:
            raise ValueError("wrong vector size")
        rows = z.reshape(-1, D)
        n_rows = rows.shape[0]
        use = [True] * n_rows if mask is None else [bool(v) for v in np.asarray(mask).reshape(-1)]
        old = self.codebook.copy()
        codes = np.empty(n_rows, dtype=np.int64)
        for i in range(n_rows):
            codes[i] = int(np.argmin(((old - rows[i]) ** 2).sum(axis=1)))
        q = old[codes]
        counts = np.zeros(K)
        sums = np.zeros((K, D))
        err = 0.0
        m = 0
        for i in range(n_rows):
            if use[i]:
                counts[codes[i]] += 1
                sums[codes[i]] += rows[i]
                err += float(((q[i] - rows[i]) ** 2).sum())
                m += 1
        loss = self.commitment_cost * err / (m * D) if m else 0.0
        if self.training:
            self.ema_cluster_size[:] = self.decay * self.ema_cluster_size + (1 - self.decay) * counts
            self.ema_w[:] = self.decay * self.ema_w + (1 - self.decay) * sums
            total = float(self.ema_cluster_size.sum())
            for j in range(K):
                size_j = (self.ema_cluster_size[j] + self.eps) / (total + K * self.eps) * total
                self.codebook[j] = self.ema_w[j] / size_j
        probs = counts / m if m else counts
        entropy = -sum(p * math.log(p + 1e-10) for p in probs)
        return q.reshape(z.shape), loss, codes.reshape(z.shape[:-1]), math.exp(entropy)
''',
    "bincount and add.at": VQ_HEAD + '''        x = np.asarray(z, dtype=np.float64)
        K, D = self.codebook.shape
        if x.shape[-1] != D:
            raise ValueError("dimension mismatch")
        flat = x.reshape(-1, D)
        keep = np.ones(len(flat), dtype=bool) if mask is None else np.asarray(mask).astype(bool).ravel()
        diff = flat[:, None, :] - self.codebook[None, :, :]
        idx = np.einsum("nkd,nkd->nk", diff, diff).argmin(axis=1)
        q = np.take(self.codebook, idx, axis=0)
        sel = idx[keep]
        hist = np.bincount(sel, minlength=K).astype(np.float64)
        m = int(keep.sum())
        loss = float(self.commitment_cost * ((q[keep] - flat[keep]) ** 2).sum() / (m * D)) if m > 0 else 0.0
        if self.training:
            sums = np.zeros((K, D))
            np.add.at(sums, sel, flat[keep])
            d = self.decay
            np.multiply(self.ema_cluster_size, d, out=self.ema_cluster_size)
            self.ema_cluster_size += (1.0 - d) * hist
            np.multiply(self.ema_w, d, out=self.ema_w)
            self.ema_w += (1.0 - d) * sums
            total = self.ema_cluster_size.sum()
            smoothed = total * (self.ema_cluster_size + self.eps) / (total + K * self.eps)
            np.divide(self.ema_w, smoothed[:, None], out=self.codebook)
        p = hist / max(m, 1)
        perplexity = float(np.exp(-(p * np.log(p + 1e-10)).sum()))
        return q.reshape(x.shape), loss, idx.reshape(x.shape[:-1]), perplexity
''',
}


def vq_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of a few forwards on general settings: the defaults on a batch of sequences; another decay,
    commitment cost and eps on 2-D batches with codes left unused; training then eval mode; a mask of positions,
    then a batch where nothing counts; a mask in eval mode; vectors of the wrong size. Each gives, after every
    forward, its four results, the codebook array the caller held before the calls, the moving averages, and the
    inputs as the caller holds them."""
    rng = np.random.default_rng(152)
    calls: list[Callable[[], object]] = []
    for kwargs, plan in (
            ({"num_codes": 6, "dim": 3, "seed": 1}, [((2, 5, 3), None, True)] * 3),
            ({"num_codes": 5, "dim": 3, "decay": 0.8, "commitment_cost": 1.0, "eps": 1e-3, "seed": 2},
             [((7, 3), None, True)] * 3),
            ({"num_codes": 8, "dim": 4, "seed": 3}, [((4, 6, 4), None, True), ((4, 6, 4), None, False),
                                                     ((3, 4), None, False), ((4, 6, 4), None, True)]),
            ({"num_codes": 6, "dim": 3, "decay": 0.9, "seed": 4},
             [((3, 4, 3), "some", True), ((3, 4, 3), "some", True), ((3, 4, 3), "none", True),
              ((3, 4, 3), None, True)]),
            ({"num_codes": 6, "dim": 3, "decay": 0.9, "seed": 5},
             [((3, 4, 3), None, True), ((3, 4, 3), "some", False), ((3, 4, 3), "none", False)]),
            ({"num_codes": 4, "dim": 2, "commitment_cost": 0.5, "seed": 6},
             [((5, 2), None, True), ((5, 3), None, True)])):
        data = [(1.5 * rng.normal(size=shape),
                 None if which is None else (rng.random(shape[:-1]) < 0.6 if which == "some"
                                             else np.zeros(shape[:-1], dtype=bool)))
                for shape, which, _ in plan]
        modes = [training for _, _, training in plan]

        def call(kwargs=kwargs, data=data, modes=modes) -> object:
            vq = ns["VectorQuantizerEMA"](**kwargs)
            held_codebook = vq.codebook
            trace = []
            for (z, mask), training in zip(data, modes, strict=True):
                vq.training = training
                z_held = z.copy()
                mask_held = None if mask is None else mask.copy()
                try:
                    out = vq.forward(z_held, mask=mask_held)
                except ValueError:
                    out = "raised"
                trace.append((out, held_codebook.copy(), vq.ema_cluster_size.copy(), vq.ema_w.copy(), z_held,
                              mask_held))
            return trace

        calls.append(call)
    return calls


# -- Gradual magnitude pruning (Zhu and Gupta 2018) ---------------------------------------------------------------

GP_HEAD = '''class GradualMagnitudePruner:
    """Gradual magnitude pruning ("To prune, or not to prune: exploring the efficacy of pruning for model
    compression"): the sparsity of the pruned tensors rises from ``initial_sparsity`` to ``final_sparsity`` along a
    cubic schedule, every ``frequency`` steps from ``begin_step`` to ``end_step``, the smallest-magnitude weights
    pruned first. ``self.params`` maps names to the model's own arrays, which pruning zeroes in place;
    ``self.masks`` holds their boolean masks (True where a weight is kept). Settings in ``self.cfg.pruning``."""

    def __init__(self, cfg, params):
        self.cfg = cfg
        self.params = params
        self.masks = {name: np.ones(np.shape(p), dtype=bool) for name, p in params.items()}
        self.sparsity = 0.0

    def step(self, global_step):
'''
GP_BODY = '''        c = self.cfg.pruning
        if c.scope not in ("layer", "global"):
            raise ValueError(f"unknown pruning scope {c.scope!r}")
        if global_step < c.begin_step or global_step > c.end_step:
            return self.sparsity
        if (global_step - c.begin_step) % c.frequency != 0:
            return self.sparsity
        if c.end_step > c.begin_step:
            progress = (global_step - c.begin_step) / (c.end_step - c.begin_step)
        else:
            progress = 1.0
        target = c.final_sparsity + (c.initial_sparsity - c.final_sparsity) * (1.0 - progress) ** 3
        names = [name for name, p in self.params.items() if not (c.skip_1d and p.ndim <= 1)]
        if c.scope == "global":
            groups = [names]
        else:
            groups = [[name] for name in names]
        for group in groups:
            scores = np.concatenate([np.where(self.masks[n], np.abs(self.params[n]), -1.0).ravel() for n in group])
            n_prune = int(np.floor(target * scores.size))
            keep = np.ones(scores.size, dtype=bool)
            keep[np.argsort(scores, kind="stable")[:n_prune]] = False
            start = 0
            for name in group:
                mask = self.masks[name]
                mask &= keep[start:start + mask.size].reshape(mask.shape)
                start += mask.size
                self.params[name] *= mask
        self.sparsity = float(target)
        return self.sparsity
'''
GP_DOC = '''        """Prune to the scheduled sparsity when ``global_step`` is a pruning step; called once per step.

        ``global_step``: an int. Settings, read from ``self.cfg.pruning``: ``initial_sparsity``,
        ``final_sparsity``, ``begin_step``, ``end_step``, ``frequency``, ``scope`` ("layer" or "global", else
        ValueError, checked on every call) and ``skip_1d``.

        The pruning steps are ``begin_step``, ``begin_step + frequency``, ... up to ``end_step`` included; at any
        other step nothing changes and ``self.sparsity`` is returned. At a pruning step the target sparsity is
        ``s_f + (s_i - s_f) * (1 - progress) ** 3`` with ``progress = (global_step - begin_step) / (end_step -
        begin_step)``, or 1 when ``end_step`` is not after ``begin_step``. The pruned tensors are those of
        ``self.params`` in its order, less the tensors of at most one dimension when ``skip_1d``; with ``scope``
        "layer" each is pruned on its own, with "global" they are pruned together as one vector. Pruning a
        group of n weights: the ``floor(target * n)`` lowest scores lose their mask, a weight's score being its
        magnitude, or -1 where it is already masked out; a mask only ever loses entries (``self.masks``' arrays
        changed in place), and every pruned tensor is then multiplied by its mask in place (the very arrays of
        ``self.params``).

        Sets ``self.sparsity`` to the target, a float, and returns it.
        """
'''
GP_GOLDEN = "\n\n" + GP_HEAD + GP_DOC + GP_BODY
GP_CONFIG = '''"""Experiment configuration."""

from dataclasses import dataclass, field


@dataclass
class PruningConfig:
    initial_sparsity: float = 0.0
    final_sparsity: float = 0.8
    begin_step: int = 100
    end_step: int = 400
    frequency: int = 50
    scope: str = "layer"
    skip_1d: bool = True


@dataclass
class TrainConfig:
    inputs: int = 8
    hidden: int = 32
    outputs: int = 3
    steps: int = 500
    batch_size: int = 32
    lr: float = 0.05
    pruning: PruningConfig = field(default_factory=PruningConfig)
'''
GP_DRIVER = '''"""Train a small regression MLP while gradual magnitude pruning sparsifies its weight matrices:
python train_sparse.py"""

import numpy as np

from sparsify.config import TrainConfig
from sparsify.pruning import GradualMagnitudePruner


def forward_backward(params, x, y):
    pre = x @ params["w1"] + params["b1"]
    h = np.tanh(pre)
    out = h @ params["w2"] + params["b2"]
    diff = out - y
    loss = float(np.mean(diff ** 2))
    d_out = 2.0 * diff / diff.size
    d_h = d_out @ params["w2"].T * (1.0 - h * h)
    grads = {"w1": x.T @ d_h, "b1": d_h.sum(axis=0), "w2": h.T @ d_out, "b2": d_out.sum(axis=0)}
    return loss, grads


def main():
    rng = np.random.default_rng(0)
    cfg = TrainConfig()
    x = rng.normal(size=(1024, cfg.inputs))
    true_w = rng.normal(size=(cfg.inputs, cfg.outputs)) * (rng.random((cfg.inputs, cfg.outputs)) < 0.5)
    y = np.tanh(x @ true_w) + 0.05 * rng.normal(size=(1024, cfg.outputs))
    params = {"w1": rng.normal(scale=0.5, size=(cfg.inputs, cfg.hidden)), "b1": np.zeros(cfg.hidden),
              "w2": rng.normal(scale=0.5, size=(cfg.hidden, cfg.outputs)), "b2": np.zeros(cfg.outputs)}
    pruner = GradualMagnitudePruner(cfg, params)
    for step in range(cfg.steps):
        sparsity = pruner.step(step)
        idx = rng.choice(len(x), size=cfg.batch_size, replace=False)
        loss, grads = forward_backward(params, x[idx], y[idx])
        for name, grad in grads.items():
            params[name] -= cfg.lr * grad * pruner.masks[name]
        if step % 50 == 0:
            zeros = ", ".join(f"{name} {float(np.mean(p == 0.0)):.3f}" for name, p in params.items())
            print(f"step {step}: loss {loss:.4f}, target sparsity {sparsity:.3f}, zero share {zeros}")
    full_loss, _ = forward_backward(params, x, y)
    print(f"final loss {full_loss:.4f}")


if __name__ == "__main__":
    main()
'''

_gp = editor(GP_HEAD, GP_BODY)

GP_WRONG = {
    "scope ignored": _gp('''        if c.scope == "global":
            groups = [names]
        else:
            groups = [[name] for name in names]
''', '''        groups = [[name] for name in names]
'''),
    "initial_sparsity left out": _gp(
        "target = c.final_sparsity + (c.initial_sparsity - c.final_sparsity) * (1.0 - progress) ** 3",
        "target = c.final_sparsity * (1.0 - (1.0 - progress) ** 3)"),
    "pruning starts a step late": _gp("if global_step < c.begin_step or global_step > c.end_step:",
                                      "if global_step <= c.begin_step or global_step > c.end_step:"),
    "no guard for a one-step schedule": _gp('''        if c.end_step > c.begin_step:
            progress = (global_step - c.begin_step) / (c.end_step - c.begin_step)
        else:
            progress = 1.0
''', '''        progress = (global_step - c.begin_step) / (c.end_step - c.begin_step)
'''),
    "pruned weights can grow back": _gp(
        "np.where(self.masks[n], np.abs(self.params[n]), -1.0).ravel()", "np.abs(self.params[n]).ravel()").replace(
        "mask &= keep[start:start + mask.size].reshape(mask.shape)",
        "mask[...] = keep[start:start + mask.size].reshape(mask.shape)"),
    "weights rebound, not zeroed in place": _gp("self.params[name] *= mask",
                                                "self.params[name] = self.params[name] * mask"),
    "skip_1d ignored": _gp("names = [name for name, p in self.params.items() if not (c.skip_1d and p.ndim <= 1)]",
                           "names = list(self.params)"),
    "frequency ignored": _gp('''        if (global_step - c.begin_step) % c.frequency != 0:
            return self.sparsity
''', ""),
    "share of the surviving weights": _gp("n_prune = int(np.floor(target * scores.size))",
                                          "n_prune = int(np.floor(target * np.count_nonzero(scores >= 0)))"),
    "final step left out": _gp("if global_step < c.begin_step or global_step > c.end_step:",
                               "if global_step < c.begin_step or global_step >= c.end_step:"),
}
GP_RIGHT = {
    "math schedule, argpartition per bucket": GP_HEAD + '''        import math

        cfg = self.cfg.pruning
        if cfg.scope != "layer" and cfg.scope != "global":
            raise ValueError("scope must be layer or global")
        t0, t1 = cfg.begin_step, cfg.end_step
        if not t0 <= global_step <= t1 or (global_step - t0) % cfg.frequency:
            return self.sparsity
        frac = 1.0 if t1 <= t0 else (global_step - t0) / (t1 - t0)
        s = cfg.final_sparsity + (cfg.initial_sparsity - cfg.final_sparsity) * math.pow(1.0 - frac, 3)
        prunable = [k for k in self.params if not cfg.skip_1d or np.ndim(self.params[k]) > 1]
        buckets = [prunable] if cfg.scope == "global" else [[k] for k in prunable]
        for bucket in buckets:
            sizes = [self.params[k].size for k in bucket]
            total = sum(sizes)
            mags = np.concatenate([np.where(self.masks[k].ravel(), np.abs(self.params[k]).ravel(), -np.inf)
                                   for k in bucket])
            drop = math.floor(s * total)
            flags = np.ones(total, dtype=bool)
            if drop > 0:
                flags[np.argpartition(mags, drop - 1)[:drop]] = False
            pos = 0
            for k, size in zip(bucket, sizes):
                piece = flags[pos:pos + size].reshape(self.masks[k].shape)
                np.logical_and(self.masks[k], piece, out=self.masks[k])
                np.multiply(self.params[k], self.masks[k], out=self.params[k])
                pos += size
        self.sparsity = float(s)
        return self.sparsity
''',
    "ranks over one flat vector": GP_HEAD + '''        p = self.cfg.pruning
        if p.scope not in {"layer", "global"}:
            raise ValueError(p.scope)
        if global_step < p.begin_step or global_step > p.end_step:
            return self.sparsity
        if (global_step - p.begin_step) % p.frequency:
            return self.sparsity
        span = p.end_step - p.begin_step
        remaining = 0.0 if span <= 0 else 1.0 - (global_step - p.begin_step) / span
        target = p.final_sparsity + (p.initial_sparsity - p.final_sparsity) * remaining ** 3
        chosen = [k for k, v in self.params.items() if v.ndim > 1 or not p.skip_1d]
        group_of = {k: (0 if p.scope == "global" else i) for i, k in enumerate(chosen)}
        for g in sorted(set(group_of.values())):
            members = [k for k in chosen if group_of[k] == g]
            scores = np.concatenate([np.abs(self.params[k]).ravel() for k in members])
            alive = np.concatenate([self.masks[k].ravel() for k in members])
            scores = np.where(alive, scores, -1.0)
            order = np.argsort(scores, kind="mergesort")
            rank = np.empty(scores.size, dtype=np.int64)
            rank[order] = np.arange(scores.size)
            survive = rank >= int(target * scores.size // 1)
            offset = 0
            for k in members:
                m = self.masks[k]
                m[...] = m & survive[offset:offset + m.size].reshape(m.shape)
                self.params[k][~m] = 0.0
                offset += m.size
        self.sparsity = float(target)
        return self.sparsity
''',
}


def gp_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of a schedule on general settings, each step followed by an update of the weights (masked, as the
    driver's, or not, so that pruned weights grow back): the default shape of config on small tensors; another
    frequency and begin step; a nonzero initial sparsity; the global scope; 1-D tensors pruned; a one-step
    schedule; pruned weights that grow back; an unknown scope. Each gives, at every step, the value returned, the
    stored sparsity and the masks; at the end, the arrays the caller holds."""
    shapes = {"w1": (5, 7), "b1": (7,), "w2": (7, 3), "b2": (3,)}
    calls: list[Callable[[], object]] = []

    def config(initial=0.0, final=0.8, begin=2, end=8, frequency=2, scope="layer", skip_1d=True):
        return SimpleNamespace(pruning=SimpleNamespace(initial_sparsity=initial, final_sparsity=final,
                                                       begin_step=begin, end_step=end, frequency=frequency,
                                                       scope=scope, skip_1d=skip_1d))

    for seed, cfg, steps, masked in (
            (1, config(), 11, True),
            (2, config(begin=1, end=10, frequency=3, final=0.7), 13, True),
            (3, config(initial=0.3, final=0.9, begin=3, end=9, frequency=3), 11, True),
            (4, config(scope="global", final=0.75), 10, True),
            (5, config(skip_1d=False, final=0.6, begin=0, end=4, frequency=1), 6, True),
            (6, config(begin=4, end=4, frequency=1, final=0.65), 7, True),
            (7, config(final=0.7), 10, False),
            (8, config(scope="global", initial=0.2, final=0.85, begin=1, end=7, frequency=2), 9, False),
            (9, config(scope="tensor"), 4, True)):

        def call(seed=seed, cfg=cfg, steps=steps, masked=masked) -> object:
            rng = np.random.default_rng(150 + seed)
            arrays = {name: rng.normal(size=shape) for name, shape in shapes.items()}
            held = dict(arrays)
            pruner = ns["GradualMagnitudePruner"](cfg, dict(arrays))
            trace: list[object] = []
            for step in range(steps):
                try:
                    out = pruner.step(step)
                except (ValueError, ZeroDivisionError) as exc:
                    trace.append(type(exc).__name__)
                    break
                trace.append((out, pruner.sparsity, [pruner.masks[k].copy() for k in shapes]))
                for name, array in held.items():
                    noise = 0.3 * rng.normal(size=array.shape)
                    array += noise * pruner.masks[name] if masked else noise
            trace.append([held[k].copy() for k in shapes])
            return trace

        calls.append(call)
    return calls


# -- Priority updates of proportional prioritized replay on a sum tree (Schaul et al. 2016) -----------------------

PR_HEAD = '''class PrioritizedReplayBuffer:
    """Proportional prioritized experience replay ("Prioritized Experience Replay") over a ring of ``capacity``
    transitions. The priorities raised to ``alpha`` live in the leaves of two segment trees, one of sums and one
    of minima: ``self.sum_tree`` and ``self.min_tree``, arrays of 2 * capacity with the root at index 1, node j's
    children at 2j and 2j + 1, and transition i's leaf at capacity + i (a leaf not yet used holds 0 in the sum
    tree and inf in the min tree)."""

    def __init__(self, capacity, alpha=0.6, eps=1e-6):
        if capacity < 1:
            raise ValueError("capacity must be positive")
        self.capacity = capacity
        self.alpha = alpha
        self.eps = eps
        self.sum_tree = np.zeros(2 * capacity)
        self.min_tree = np.full(2 * capacity, np.inf)
        self.max_priority = 1.0
        self.storage = []
        self.next_idx = 0

    def __len__(self):
        return len(self.storage)

    def add(self, transition):
        """Store a transition, overwriting the oldest once full, with the largest priority seen so far."""
        if len(self.storage) < self.capacity:
            self.storage.append(transition)
        else:
            self.storage[self.next_idx] = transition
        node = self.capacity + self.next_idx
        value = self.max_priority ** self.alpha
        self.sum_tree[node] = value
        self.min_tree[node] = value
        node //= 2
        while node >= 1:
            self.sum_tree[node] = self.sum_tree[2 * node] + self.sum_tree[2 * node + 1]
            self.min_tree[node] = min(self.min_tree[2 * node], self.min_tree[2 * node + 1])
            node //= 2
        self.next_idx = (self.next_idx + 1) % self.capacity

    def _find(self, mass):
        """The transition whose share of the sum tree's total holds ``mass`` (capacity a power of two)."""
        node = 1
        while node < self.capacity:
            left = 2 * node
            if mass < self.sum_tree[left]:
                node = left
            else:
                mass -= self.sum_tree[left]
                node = left + 1
        return min(node - self.capacity, len(self.storage) - 1)

    def sample(self, batch_size, beta, rng):
        """Stratified proportional sampling: one transition from each of ``batch_size`` equal slices of the total
        priority, with importance weights ``(N * P(i)) ** -beta`` divided by their largest possible value."""
        total = self.sum_tree[1]
        edges = np.linspace(0.0, total, batch_size + 1)
        masses = rng.uniform(edges[:-1], edges[1:])
        indices = np.array([self._find(m) for m in masses])
        n = len(self.storage)
        probs = self.sum_tree[self.capacity + indices] / total
        max_weight = (self.min_tree[1] / total * n) ** (-beta)
        weights = (probs * n) ** (-beta) / max_weight
        return indices, weights

    def update_priorities(self, indices, td_errors):
'''
PR_BODY = '''        indices = np.asarray(indices).reshape(-1)
        errors = np.asarray(td_errors, dtype=np.float64).reshape(-1)
        if indices.size != errors.size:
            raise ValueError(f"{indices.size} indices but {errors.size} TD errors")
        if indices.size == 0:
            return
        if indices.min() < 0 or indices.max() >= len(self.storage):
            raise IndexError("priority update of a transition that is not stored")
        priorities = np.abs(errors) + self.eps
        for idx, priority in zip(indices.tolist(), priorities.tolist()):
            node = self.capacity + idx
            value = priority ** self.alpha
            self.sum_tree[node] = value
            self.min_tree[node] = value
            node //= 2
            while node >= 1:
                self.sum_tree[node] = self.sum_tree[2 * node] + self.sum_tree[2 * node + 1]
                self.min_tree[node] = min(self.min_tree[2 * node], self.min_tree[2 * node + 1])
                node //= 2
        self.max_priority = max(self.max_priority, float(priorities.max()))
'''
PR_DOC = '''        """Set the priorities of sampled transitions from their new TD errors.

        ``indices``: ints, the transitions' indices (any shape; duplicates allowed, the last one counting);
        ``td_errors``: floats, as many as the indices, else ValueError. Every index must be a stored transition's,
        in [0, len(self)), else IndexError (after the size check); nothing changes when either is raised. Settings,
        read from ``self``: ``alpha`` and ``eps``.

        Transition i's priority is ``p = |td_error| + eps``; its leaf in both trees becomes ``p ** alpha``, and
        every ancestor of a changed leaf is recomputed: a node of ``self.sum_tree`` as the sum of its two
        children, of ``self.min_tree`` as their minimum (both arrays changed in place). ``self.max_priority``
        becomes the largest of itself and the new priorities p (before the exponent). No index (empty arrays)
        changes nothing. Returns None; the arguments are not changed.
        """
'''
PR_GOLDEN = "\n\n" + PR_HEAD + PR_DOC + PR_BODY
PR_DRIVER = '''"""Q-learning with proportional prioritized replay on a random MDP: python train_dqn.py"""

import numpy as np

from replay.buffer import PrioritizedReplayBuffer

N_STATES = 12
N_ACTIONS = 3
CAPACITY = 256
BATCH = 32
STEPS = 1500
GAMMA = 0.9
LR = 0.2


def main():
    rng = np.random.default_rng(0)
    next_state = rng.integers(0, N_STATES, size=(N_STATES, N_ACTIONS))
    reward = rng.normal(size=(N_STATES, N_ACTIONS))
    q = np.zeros((N_STATES, N_ACTIONS))
    buffer = PrioritizedReplayBuffer(CAPACITY)
    state = 0
    for step in range(1, STEPS + 1):
        explore = max(0.05, 1.0 - step / 500)
        action = int(rng.integers(N_ACTIONS)) if rng.random() < explore else int(np.argmax(q[state]))
        following = int(next_state[state, action])
        r = float(reward[state, action] + 0.1 * rng.normal())
        done = bool(rng.random() < 0.05)
        buffer.add((state, action, r, following, done))
        state = 0 if done else following
        if len(buffer) < 2 * BATCH:
            continue
        beta = min(1.0, 0.4 + 0.6 * step / STEPS)
        indices, weights = buffer.sample(BATCH, beta, rng)
        td = np.empty(BATCH)
        for j, i in enumerate(indices):
            s, a, r_i, s_next, d = buffer.storage[i]
            target = r_i + (0.0 if d else GAMMA * q[s_next].max())
            td[j] = target - q[s, a]
        for j, i in enumerate(indices):
            s, a = buffer.storage[i][:2]
            q[s, a] += LR * weights[j] * td[j]
        buffer.update_priorities(indices, td)
        if step % 250 == 0:
            print(f"step {step}: mean |td| {float(np.abs(td).mean()):.4f}, total priority {buffer.sum_tree[1]:.3f}, "
                  f"max priority {buffer.max_priority:.3f}, smallest weight {float(weights.min()):.3f}")


if __name__ == "__main__":
    main()
'''

_pr = editor(PR_HEAD, PR_BODY)

PR_WRONG = {
    "pins alpha": _pr("value = priority ** self.alpha", "value = priority ** 0.6"),
    "eps added after the exponent": _pr("priorities = np.abs(errors) + self.eps", "priorities = np.abs(errors)")
    .replace("value = priority ** self.alpha", "value = priority ** self.alpha + self.eps"),
    "sign of the TD error kept": _pr("priorities = np.abs(errors) + self.eps", "priorities = errors + self.eps"),
    "max_priority kept after the exponent": _pr(
        "self.max_priority = max(self.max_priority, float(priorities.max()))",
        "self.max_priority = max(self.max_priority, float(priorities.max()) ** self.alpha)"),
    "min tree not updated": _pr("            self.min_tree[node] = value\n", "").replace(
        "                self.min_tree[node] = min(self.min_tree[2 * node], self.min_tree[2 * node + 1])\n", ""),
    "index equal to the size accepted": _pr("indices.max() >= len(self.storage)", "indices.max() > len(self.storage)"),
    "negative indices accepted": _pr("if indices.min() < 0 or indices.max() >= len(self.storage):",
                                     "if indices.max() >= len(self.storage):"),
    "sizes not compared": _pr('''        if indices.size != errors.size:
            raise ValueError(f"{indices.size} indices but {errors.size} TD errors")
''', ""),
    "empty update not guarded": _pr('''        if indices.size == 0:
            return
''', ""),
    "ancestors updated by +=, repeats lost": _pr(
        '''        for idx, priority in zip(indices.tolist(), priorities.tolist()):
            node = self.capacity + idx
            value = priority ** self.alpha
            self.sum_tree[node] = value
            self.min_tree[node] = value
            node //= 2
            while node >= 1:
                self.sum_tree[node] = self.sum_tree[2 * node] + self.sum_tree[2 * node + 1]
                self.min_tree[node] = min(self.min_tree[2 * node], self.min_tree[2 * node + 1])
                node //= 2
''', '''        nodes = self.capacity + indices
        values = priorities ** self.alpha
        change = values - self.sum_tree[nodes]
        self.sum_tree[nodes] = values
        self.min_tree[nodes] = values
        while True:
            nodes = nodes // 2
            live = nodes >= 1
            if not live.any():
                break
            nodes, change = nodes[live], change[live]
            self.sum_tree[nodes] += change
            self.min_tree[nodes] = np.minimum(self.min_tree[2 * nodes], self.min_tree[2 * nodes + 1])
'''),
}
PR_RIGHT = {
    "index by index with math.pow": PR_HEAD + '''        import math

        idx = [int(i) for i in np.asarray(indices).ravel()]
        err = [float(e) for e in np.asarray(td_errors, dtype=float).ravel()]
        if len(idx) != len(err):
            raise ValueError("one TD error per index")
        stored = len(self.storage)
        for i in idx:
            if not 0 <= i < stored:
                raise IndexError(i)
        for i, e in zip(idx, err):
            p = abs(e) + self.eps
            v = math.pow(p, self.alpha)
            j = i + self.capacity
            self.sum_tree[j] = v
            self.min_tree[j] = v
            while j > 1:
                j >>= 1
                self.sum_tree[j] = self.sum_tree[j << 1] + self.sum_tree[(j << 1) | 1]
                self.min_tree[j] = min(self.min_tree[j << 1], self.min_tree[(j << 1) | 1])
            self.max_priority = max(self.max_priority, p)
''',
    "last repeats kept, trees rebuilt": PR_HEAD + '''        idx = np.asarray(indices, dtype=np.int64).ravel()
        err = np.asarray(td_errors, dtype=np.float64).ravel()
        if idx.shape != err.shape:
            raise ValueError("indices and TD errors differ in size")
        if idx.size == 0:
            return None
        if ((idx < 0) | (idx >= len(self))).any():
            raise IndexError("not a stored transition")
        pr = np.abs(err) + self.eps
        uniq, first_from_end = np.unique(idx[::-1], return_index=True)
        last = idx.size - 1 - first_from_end
        leaves = self.capacity + uniq
        self.sum_tree[leaves] = np.power(pr[last], self.alpha)
        self.min_tree[leaves] = self.sum_tree[leaves]
        for node in range(self.capacity - 1, 0, -1):
            self.sum_tree[node] = self.sum_tree[2 * node] + self.sum_tree[2 * node + 1]
            self.min_tree[node] = min(self.min_tree[2 * node], self.min_tree[2 * node + 1])
        self.max_priority = max(self.max_priority, float(pr.max()))
        return None
''',
}


def pr_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Runs of adds, updates and samples on general buffers: a buffer partly filled, with negative, zero and
    repeated TD errors and a sample after; another alpha and eps on a full buffer that has wrapped round; a
    capacity that is not a power of two; 2-D TD errors; a large error raising the largest priority, then an add;
    an index equal to the number stored, a negative index, unequal sizes and an empty update. Each gives, after
    every operation, the trees, the largest priority, what a sample returned, and the arguments as the caller
    holds them."""
    rng = np.random.default_rng(153)
    calls: list[Callable[[], object]] = []
    for kwargs, n_add, ops in (
            ({"capacity": 8}, 6, [([0, 3, 5], [0.5, -1.2, 0.0]), ([1, 1, 4], [2.0, 0.3, -0.7]), ([2], [-3.5]),
                                  "sample"]),
            ({"capacity": 8, "alpha": 0.5, "eps": 0.01}, 11, [([7, 0, 2, 5], [0.1, -0.4, 0.0, 1.5]), "sample",
                                                              ([3, 6], [-0.2, 0.05])]),
            ({"capacity": 5, "alpha": 1.0}, 5, [([4, 0, 2], [0.3, 0.0, -2.5]), ([1, 3, 1], [0.7, -0.1, 0.4])]),
            ({"capacity": 4, "alpha": 0.7}, 4, [(np.array([2, 0, 3]), np.array([[0.6], [-0.9], [0.2]])), "sample"]),
            ({"capacity": 8}, 3, [([1], [5.0]), "add", ([0, 2], [0.25, -0.5]), "add", "sample"]),
            ({"capacity": 8}, 6, [([1, 6], [0.5, 0.2]), ([2, 4], [0.3, 0.1])]),
            ({"capacity": 8}, 6, [([-1, 2], [0.5, 0.2]), ([0, 1], [1.0, 2.0])]),
            ({"capacity": 8}, 6, [([0, 1, 2], [0.5, 0.2]), ([], []), ([3, 0], [0.0, -4.0])]),
            ({"capacity": 2, "alpha": 0.9}, 2, [([1, 0, 1], [0.4, -0.3, 0.0])])):
        seed = int(rng.integers(1 << 30))

        def call(kwargs=kwargs, n_add=n_add, ops=ops, seed=seed) -> object:
            buffer = ns["PrioritizedReplayBuffer"](**kwargs)
            for t in range(n_add):
                buffer.add(("transition", t))
            draw = np.random.default_rng(seed)
            trace: list[object] = []
            for op in ops:
                result: object = None
                held: object = None
                if op == "sample":
                    result = buffer.sample(4, 0.5, draw)
                elif op == "add":
                    buffer.add(("late", len(trace)))
                else:
                    held = tuple(np.array(x, dtype=np.float64 if k else np.int64) for k, x in enumerate(op))
                    try:
                        result = buffer.update_priorities(*held)
                    except (ValueError, IndexError, TypeError) as exc:
                        result = type(exc).__name__
                trace.append((result, buffer.sum_tree.copy(), buffer.min_tree.copy(), buffer.max_priority, held))
            return trace

        calls.append(call)
    return calls


_NP = "import numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "60-DPOPreferenceLoss", "files": {"prefopt/__init__.py": "", "prefopt/config.py": DP_CONFIG,
     "prefopt/dpo.py": '"""Preference optimisation losses."""\n\nimport numpy as np\n' + DP_GOLDEN,
     "train_dpo.py": DP_DRIVER},
     "function": "prefopt/dpo.py::DPOTrainer.dpo_loss", "command": "python train_dpo.py",
     "head": _NP, "wrong": DP_WRONG, "right": DP_RIGHT, "check": dp_check,
     "gaps": {"pins beta": ["beta"],
              "label smoothing ignored": ["label_smoothing"],
              "label smoothing of one half accepted": ["label_smoothing", "0.0 <= c.label_smoothing < 0.5"],
              "reference_free ignored": ["reference_free"],
              "hinge without its margin": ["loss_type", "np.maximum(0.0, 1.0 - beta * h)"],
              "IPO with beta on the margin": ["loss_type", "(h - 1.0 / (2.0 * beta)) ** 2"],
              "weights ignored": ["weights"],
              "naive log-sigmoid": ["np.logaddexp(0.0, -beta * h)"],
              "rewards without beta": ["beta * (pi_chosen - ref_chosen)", "beta * (pi_rejected - ref_rejected)"],
              "reference log-ratio added": ["h = (pi_chosen - pi_rejected) - (ref_chosen - ref_rejected)"]}},
    {"name": "61-VQEMACodebook", "files": {"vqvae/__init__.py": "", "vqvae/quantizer.py":
     '"""The vector-quantisation bottleneck of VQ-VAE."""\n\nimport numpy as np\n' + VQ_GOLDEN,
     "train_vq.py": VQ_DRIVER},
     "function": "vqvae/quantizer.py::VectorQuantizerEMA.forward", "command": "python train_vq.py",
     "head": _NP, "wrong": VQ_WRONG, "right": VQ_RIGHT, "check": vq_check,
     "gaps": {"pins decay": ["decay"],
              "pins commitment_cost": ["commitment_cost"],
              "updates out of training": ["training", "if self.training:"],
              "mask ignored in the codebook statistics": ["mask", "encodings = encodings[valid]"],
              "loss over every position": ["mask", "quantized[valid] - flat[valid]"],
              "no guard for a batch with nothing counted": ["if n_valid:", "loss = 0.0"],
              "quantised by the updated codebook": ["quantized = self.codebook[codes]"],
              "no Laplace smoothing": ["eps", "(n + num_codes * self.eps) * n"],
              "codes by the largest dot product": ["np.argmin(distances, axis=1)",
                                                   "np.sum(self.codebook ** 2, axis=1)"],
              "commitment summed over each vector": ["np.mean((quantized[valid] - flat[valid]) ** 2)"]}},
    {"name": "62-GradualPruning", "files": {"sparsify/__init__.py": "", "sparsify/config.py": GP_CONFIG,
     "sparsify/pruning.py": '"""Magnitude pruning during training."""\n\nimport numpy as np\n' + GP_GOLDEN,
     "train_sparse.py": GP_DRIVER},
     "function": "sparsify/pruning.py::GradualMagnitudePruner.step", "command": "python train_sparse.py",
     "head": _NP, "wrong": GP_WRONG, "right": GP_RIGHT, "check": gp_check,
     "gaps": {"scope ignored": ["scope"],
              "initial_sparsity left out": ["initial_sparsity"],
              "pruning starts a step late": ["begin_step", "global_step < c.begin_step"],
              "no guard for a one-step schedule": ["if c.end_step > c.begin_step:", "progress = 1.0"],
              "pruned weights can grow back": ["np.where(self.masks[n], np.abs(self.params[n]), -1.0)",
                                               "mask &= keep[start:start + mask.size].reshape(mask.shape)"],
              "weights rebound, not zeroed in place": ["self.params[name] *= mask"],
              "skip_1d ignored": ["skip_1d"],
              "frequency ignored": ["frequency"],
              "share of the surviving weights": ["n_prune = int(np.floor(target * scores.size))"],
              "final step left out": ["end_step", "global_step > c.end_step"]}},
    {"name": "63-ReplayPriorityUpdate", "files": {"replay/__init__.py": "", "replay/buffer.py":
     '"""Prioritized experience replay on segment trees."""\n\nimport numpy as np\n' + PR_GOLDEN,
     "train_dqn.py": PR_DRIVER},
     "function": "replay/buffer.py::PrioritizedReplayBuffer.update_priorities", "command": "python train_dqn.py",
     "head": _NP, "wrong": PR_WRONG, "right": PR_RIGHT, "check": pr_check,
     "gaps": {"pins alpha": ["alpha"],
              "eps added after the exponent": ["eps", "priorities = np.abs(errors) + self.eps"],
              "sign of the TD error kept": ["np.abs(errors)"],
              "max_priority kept after the exponent": ["max_priority", "float(priorities.max())"],
              "min tree not updated": ["min_tree"],
              "index equal to the size accepted": ["indices.max() >= len(self.storage)"],
              "negative indices accepted": ["indices.min() < 0"],
              "sizes not compared": ["if indices.size != errors.size:"],
              "empty update not guarded": ["if indices.size == 0:"],
              "ancestors updated by +=, repeats lost": [
                  "self.sum_tree[node] = self.sum_tree[2 * node] + self.sum_tree[2 * node + 1]"]}},
]
"""The fifteenth fresh held-out tasks."""
