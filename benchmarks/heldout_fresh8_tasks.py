"""A ninth held-out set for ``wrong_answers.py --set fresh8``: three numpy tasks of shapes that no other set nor
any test fixture has. The first is the reverse step of DDPM (Ho, Jain and Abbeel 2020) as a method reading the
schedule arrays of ``self``: the predicted clean sample from the noise prediction, clipped to [-1, 1] under a flag,
the posterior mean of q(x_{t-1} | x_t, x_0), the fixed-small or fixed-large variance, per-sample timesteps of any
mix and no noise where t is 0; the driver runs its ancestral sampler over 2-D points, one call per timestep with
the whole batch at one t, clipping on and the small variance, so neither mixed timesteps, image-shaped samples,
the large variance nor clipping off are ever reached. The second is VICReg's loss (Bardes, Ponce and LeCun 2022)
as a module reading its nested config (``self.cfg.loss.*``): the invariance as a mean squared error, the variance
hinge on the unbiased standard deviation with eps under the root, and the off-diagonal covariance over the
dimension, for two branches; the driver runs the default coefficients and target. The third is the class-balanced
loss (Cui, Jia, Lin, Song and Belongie 2019), weights from the effective number of samples rescaled to the class
count, with a softmax and a sigmoid form and a zero weight for a class with no samples; the driver trains the
softmax form on a long-tailed set where every class has samples. Written before its first run, and kept out of
tests/.

Each task has the keys of ``wrong_answer_tasks.py``: ``files``, ``function``, ``command``, ``head``, ``wrong``,
``right``, ``check`` and ``gaps``.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import numpy as np
from corpus_edits import editor

# -- DDPM ancestral sampling step (Ho, Jain and Abbeel 2020) ------------------------------------------------------

DP_HEAD = '''class GaussianDiffusion:
    """Denoising diffusion over a linear beta schedule of ``num_timesteps`` steps; ``alphas_cumprod[t]`` is the
    product of ``1 - beta`` over steps 0..t."""

    def __init__(self, num_timesteps=1000, beta_start=1e-4, beta_end=0.02):
        self.num_timesteps = num_timesteps
        self.betas = np.linspace(beta_start, beta_end, num_timesteps)
        self.alphas = 1.0 - self.betas
        self.alphas_cumprod = np.cumprod(self.alphas)

    def q_sample(self, x0, t, noise):
        """Sample x_t from q(x_t | x_0) for per-sample timesteps ``t``."""
        a = self.alphas_cumprod[t].reshape((-1,) + (1,) * (x0.ndim - 1))
        return np.sqrt(a) * x0 + np.sqrt(1.0 - a) * noise

    def p_sample(self, x_t, t, eps, noise, clip_denoised=True, var_type="fixed_small"):
'''
DP_BODY = '''        t = np.asarray(t)
        shape = (-1,) + (1,) * (x_t.ndim - 1)
        beta = self.betas[t].reshape(shape)
        alpha = self.alphas[t].reshape(shape)
        abar = self.alphas_cumprod[t].reshape(shape)
        abar_prev = np.where(t > 0, self.alphas_cumprod[np.maximum(t - 1, 0)], 1.0).reshape(shape)
        x0 = (x_t - np.sqrt(1.0 - abar) * eps) / np.sqrt(abar)
        if clip_denoised:
            x0 = np.clip(x0, -1.0, 1.0)
        coef_x0 = np.sqrt(abar_prev) * beta / (1.0 - abar)
        coef_xt = np.sqrt(alpha) * (1.0 - abar_prev) / (1.0 - abar)
        mean = coef_x0 * x0 + coef_xt * x_t
        if var_type == "fixed_small":
            var = beta * (1.0 - abar_prev) / (1.0 - abar)
        else:
            var = beta
        nonzero = (t > 0).reshape(shape)
        return mean + nonzero * np.sqrt(var) * noise
'''
DP_DOC = '''        """One ancestral sampling step x_t -> x_{t-1}. ``x_t`` is a batch (batch, ...) of any number of
        trailing axes; ``t`` an integer array (batch,) of each sample's own timestep in [0, num_timesteps), which
        may differ from sample to sample; ``eps`` the model's prediction of the noise in ``x_t`` and ``noise`` a
        standard normal draw, both of ``x_t``'s shape. With ``abar_t = alphas_cumprod[t]`` and ``abar_prev`` the
        same at t - 1 (1.0 where t is 0): the clean sample is predicted as
        ``x0 = (x_t - sqrt(1 - abar_t) * eps) / sqrt(abar_t)`` and, when ``clip_denoised``, clipped to [-1, 1].
        The mean is that of the posterior q(x_{t-1} | x_t, x0),
        ``sqrt(abar_prev) * beta_t / (1 - abar_t) * x0 + sqrt(alpha_t) * (1 - abar_prev) / (1 - abar_t) * x_t``.
        The variance is, for ``var_type="fixed_small"``, the posterior's
        ``beta_t * (1 - abar_prev) / (1 - abar_t)``, and for ``"fixed_large"`` ``beta_t`` itself. The result is
        ``mean + sqrt(variance) * noise``, except that a sample whose t is 0 gets the mean alone. No argument is
        changed."""
'''
DP_GOLDEN = "\n\n" + DP_HEAD + DP_DOC + DP_BODY
DP_DRIVER = '''"""Draw samples of a 2-D Gaussian with a DDPM sampler and its exact noise predictor: python sample.py"""

import numpy as np

from diffusion.gaussian import GaussianDiffusion

DATA_MEAN = np.array([0.4, -0.25])
DATA_STD = 0.2


def exact_eps(diffusion, x_t, t):
    """The optimal noise prediction when the data are N(DATA_MEAN, DATA_STD^2 I)."""
    abar = diffusion.alphas_cumprod[t][:, None]
    var_t = abar * DATA_STD ** 2 + 1.0 - abar
    return np.sqrt(1.0 - abar) * (x_t - np.sqrt(abar) * DATA_MEAN) / var_t


def main():
    rng = np.random.default_rng(0)
    diffusion = GaussianDiffusion(num_timesteps=100)
    n = 64
    x = rng.normal(size=(n, 2))
    for step in reversed(range(diffusion.num_timesteps)):
        t = np.full(n, step)
        eps = exact_eps(diffusion, x, t)
        x = diffusion.p_sample(x, t, eps, rng.normal(size=x.shape))
        if step % 25 == 0:
            print(f"t={step}: mean {x.mean(axis=0).round(4).tolist()}, std {x.std(axis=0).round(4).tolist()}")


if __name__ == "__main__":
    main()
'''

_dp = editor(DP_HEAD, DP_BODY)

DP_WRONG = {
    "previous alpha-bar wraps at t = 0": _dp(
        "abar_prev = np.where(t > 0, self.alphas_cumprod[np.maximum(t - 1, 0)], 1.0).reshape(shape)",
        "abar_prev = self.alphas_cumprod[t - 1].reshape(shape)"),
    "noise added at t = 0": _dp("return mean + nonzero * np.sqrt(var) * noise", "return mean + np.sqrt(var) * noise"),
    "noise gated on the first sample's timestep": _dp("nonzero = (t > 0).reshape(shape)",
                                                     "nonzero = float(t[0] > 0)"),
    "Algorithm 2's mean, clipping lost": _dp("mean = coef_x0 * x0 + coef_xt * x_t",
                                             "mean = (x_t - beta / np.sqrt(1.0 - abar) * eps) / np.sqrt(alpha)"),
    "clip flag ignored": _dp('''        if clip_denoised:
            x0 = np.clip(x0, -1.0, 1.0)
''', '''        x0 = np.clip(x0, -1.0, 1.0)
'''),
    "variance type ignored": _dp('''        if var_type == "fixed_small":
            var = beta * (1.0 - abar_prev) / (1.0 - abar)
        else:
            var = beta
''', '''        var = beta * (1.0 - abar_prev) / (1.0 - abar)
'''),
    "variance used as the standard deviation": _dp("nonzero * np.sqrt(var) * noise", "nonzero * var * noise"),
    "alpha for its square root in the mean": _dp("coef_xt = np.sqrt(alpha) * (1.0 - abar_prev)",
                                                 "coef_xt = alpha * (1.0 - abar_prev)"),
    "schedule broadcast for flat samples only": _dp("shape = (-1,) + (1,) * (x_t.ndim - 1)", "shape = (-1, 1)"),
}
DP_RIGHT = {
    "sample by sample with scalar coefficients": DP_HEAD + '''        out = np.empty(np.shape(x_t))
        for i, step in enumerate(np.asarray(t).tolist()):
            b = self.betas[step]
            a = self.alphas[step]
            ab = self.alphas_cumprod[step]
            ab_prev = self.alphas_cumprod[step - 1] if step > 0 else 1.0
            pred = (x_t[i] - math.sqrt(1.0 - ab) * eps[i]) / math.sqrt(ab)
            if clip_denoised:
                pred = np.minimum(np.maximum(pred, -1.0), 1.0)
            mu = b * math.sqrt(ab_prev) / (1.0 - ab) * pred + (1.0 - ab_prev) * math.sqrt(a) / (1.0 - ab) * x_t[i]
            if step == 0:
                out[i] = mu
                continue
            sigma2 = b if var_type == "fixed_large" else b * (1.0 - ab_prev) / (1.0 - ab)
            out[i] = mu + math.sqrt(sigma2) * noise[i]
        return out
''',
    "precomputed tables and a clipped log-variance": DP_HEAD + '''        ab = self.alphas_cumprod
        abar_prev_all = np.append(1.0, ab[:-1])
        post_var = self.betas * (1.0 - abar_prev_all) / (1.0 - ab)
        coef_x0 = self.betas * np.sqrt(abar_prev_all) / (1.0 - ab)
        coef_xt = (1.0 - abar_prev_all) * np.sqrt(self.alphas) / (1.0 - ab)
        if var_type == "fixed_large":
            table = np.append(post_var[1], self.betas[1:]) if self.num_timesteps > 1 else self.betas
        else:
            table = np.append(post_var[1], post_var[1:]) if self.num_timesteps > 1 else post_var
        log_var = np.log(np.maximum(table, 1e-20))

        per_sample = (len(t),) + (1,) * (x_t.ndim - 1)

        def pick(arr):
            return arr[t].reshape(per_sample)

        recip = np.sqrt(1.0 / pick(ab))
        recip_m1 = np.sqrt(1.0 / pick(ab) - 1.0)
        x0 = recip * x_t - recip_m1 * eps
        if clip_denoised:
            x0 = x0.clip(-1.0, 1.0)
        mean = pick(coef_x0) * x0 + pick(coef_xt) * x_t
        gate = (np.asarray(t) != 0).astype(float).reshape(per_sample)
        return mean + gate * np.exp(0.5 * pick(log_var)) * noise
''',
}


def dp_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``p_sample`` on general settings: other schedules and lengths, flat and image-shaped samples, one
    timestep for the batch and a mix with zeros (first and not first), clipping on with predictions far outside
    [-1, 1] and off, both variance types; each gives the result and the arrays the caller holds afterwards."""
    rng = np.random.default_rng(83)
    calls = []
    for steps, betas, shape, ts, clip, var_type, scale in (
            (50, (1e-4, 0.02), (6, 2), [30] * 6, True, "fixed_small", 3.0),
            (100, (1e-4, 0.02), (4, 3, 5, 5), [0, 57, 99, 12], True, "fixed_small", 1.0),
            (20, (1e-3, 0.1), (5, 2), [0, 7, 0, 19, 3], False, "fixed_large", 2.0),
            (30, (1e-4, 0.05), (3, 4), [0, 0, 0], True, "fixed_large", 1.0),
            (40, (1e-4, 0.02), (4, 2, 6), [25, 0, 39, 1], False, "fixed_small", 2.5),
            (10, (0.01, 0.2), (4, 2, 3, 3), [9, 4, 0, 1], True, "fixed_large", 1.5),
            (1000, (1e-4, 0.02), (5, 3), [999, 500, 2, 0, 250], True, "fixed_small", 1.0)):
        x_t = rng.normal(size=shape)
        eps = scale * rng.normal(size=shape)
        noise = rng.normal(size=shape)
        t = np.array(ts)

        def call(steps=steps, betas=betas, x_t=x_t, t=t, eps=eps, noise=noise, clip=clip, vt=var_type) -> object:
            diffusion = ns["GaussianDiffusion"](steps, *betas)
            args = [x_t.copy(), t.copy(), eps.copy(), noise.copy()]
            return diffusion.p_sample(*args, clip_denoised=clip, var_type=vt), args

        calls.append(call)
    return calls


# -- VICReg: variance, invariance and covariance terms (Bardes, Ponce and LeCun 2022) ------------------------------

VR_CONFIG = '''"""Pretraining configuration."""

from dataclasses import dataclass, field


@dataclass
class LossConfig:
    sim_coeff: float = 25.0
    std_coeff: float = 25.0
    cov_coeff: float = 1.0
    gamma: float = 1.0
    eps: float = 1e-4


@dataclass
class ModelConfig:
    in_dim: int = 5
    embed_dim: int = 6


@dataclass
class Config:
    model: ModelConfig = field(default_factory=ModelConfig)
    loss: LossConfig = field(default_factory=LossConfig)
    batch_size: int = 32
    lr: float = 0.01
    steps: int = 4
'''
VR_HEAD = '''class VICRegLoss:
    """The VICReg objective of two branches' embeddings; ``cfg.loss`` holds its coefficients and the target
    standard deviation."""

    def __init__(self, cfg):
        self.cfg = cfg

    def __call__(self, z_a, z_b):
'''
VR_BODY = '''        c = self.cfg.loss
        n, d = z_a.shape
        invariance = np.mean((z_a - z_b) ** 2)
        a = z_a - z_a.mean(axis=0)
        b = z_b - z_b.mean(axis=0)
        std_a = np.sqrt(np.sum(a ** 2, axis=0) / (n - 1) + c.eps)
        std_b = np.sqrt(np.sum(b ** 2, axis=0) / (n - 1) + c.eps)
        variance = 0.5 * np.mean(np.maximum(c.gamma - std_a, 0.0)) + 0.5 * np.mean(np.maximum(c.gamma - std_b, 0.0))
        cov_a = a.T @ a / (n - 1)
        cov_b = b.T @ b / (n - 1)
        off = ~np.eye(d, dtype=bool)
        covariance = np.sum(cov_a[off] ** 2) / d + np.sum(cov_b[off] ** 2) / d
        return float(c.sim_coeff * invariance + c.std_coeff * variance + c.cov_coeff * covariance)
'''
VR_DOC = '''        """The VICReg loss of the embeddings ``z_a`` and ``z_b`` (n, d) of two views of one batch (n >= 2),
        with ``c = self.cfg.loss``. Invariance: the mean squared difference ``mean((z_a - z_b) ** 2)`` over all
        n * d entries. Variance, for each branch: every dimension's standard deviation over the batch,
        ``sqrt(var + c.eps)`` with the unbiased variance (divided by n - 1), goes through the hinge
        ``max(c.gamma - std, 0)``, averaged over the d dimensions; the term is the mean of the two branches'.
        Covariance, for each branch: the covariance matrix of the centred embeddings, ``Z^T Z / (n - 1)``, its
        off-diagonal entries squared and summed, divided by d; the term is the sum of the two branches'. The
        result, a float, is ``c.sim_coeff * invariance + c.std_coeff * variance + c.cov_coeff * covariance``.
        ``z_a`` and ``z_b`` are not changed."""
'''
VR_GOLDEN = "\n\n" + VR_HEAD + VR_DOC + VR_BODY
VR_DRIVER = '''"""Pretrain a linear expander with VICReg on two noisy views of the same points: python pretrain.py"""

import numpy as np

from vicreg.config import Config
from vicreg.loss import VICRegLoss


def augment(rng, x):
    """A view: random per-feature scaling and additive noise."""
    return x * rng.uniform(0.8, 1.2, size=x.shape[1]) + 0.1 * rng.normal(size=x.shape)


def main():
    cfg = Config()
    rng = np.random.default_rng(0)
    criterion = VICRegLoss(cfg)
    w = rng.normal(scale=cfg.model.in_dim ** -0.5, size=(cfg.model.in_dim, cfg.model.embed_dim))
    mixing = rng.normal(scale=cfg.model.in_dim ** -0.5, size=(cfg.model.in_dim, cfg.model.in_dim))
    for step in range(cfg.steps):
        x = rng.normal(size=(cfg.batch_size, cfg.model.in_dim)) @ mixing
        view_a, view_b = augment(rng, x), augment(rng, x)
        loss = criterion(view_a @ w, view_b @ w)
        grad = np.zeros_like(w)
        for idx in np.ndindex(*w.shape):
            bump = np.zeros_like(w)
            bump[idx] = 1e-5
            grad[idx] = (criterion(view_a @ (w + bump), view_b @ (w + bump)) - loss) / 1e-5
        w -= cfg.lr * grad
        print(f"step {step}: vicreg loss {loss:.4f}, embedding std {(view_a @ w).std(axis=0).mean():.4f}")


if __name__ == "__main__":
    main()
'''

_vr = editor(VR_HEAD, VR_BODY)
_VR_STD = '''        std_a = np.sqrt(np.sum(a ** 2, axis=0) / (n - 1) + c.eps)
        std_b = np.sqrt(np.sum(b ** 2, axis=0) / (n - 1) + c.eps)
'''

VR_WRONG = {
    "biased standard deviation": _vr(_VR_STD, _VR_STD.replace("/ (n - 1)", "/ n")),
    "eps outside the square root": _vr(_VR_STD, '''        std_a = np.sqrt(np.sum(a ** 2, axis=0) / (n - 1)) + c.eps
        std_b = np.sqrt(np.sum(b ** 2, axis=0) / (n - 1)) + c.eps
'''),
    "hinge on the variance": _vr(_VR_STD, '''        std_a = np.sum(a ** 2, axis=0) / (n - 1) + c.eps
        std_b = np.sum(b ** 2, axis=0) / (n - 1) + c.eps
'''),
    "covariance diagonal kept": _vr("off = ~np.eye(d, dtype=bool)", "off = np.ones((d, d), dtype=bool)"),
    "covariance averaged over the off-diagonal pairs": _vr(
        "covariance = np.sum(cov_a[off] ** 2) / d + np.sum(cov_b[off] ** 2) / d",
        "covariance = np.mean(cov_a[off] ** 2) + np.mean(cov_b[off] ** 2)"),
    "covariance of uncentred embeddings": _vr('''        cov_a = a.T @ a / (n - 1)
        cov_b = b.T @ b / (n - 1)
''', '''        cov_a = z_a.T @ z_a / (n - 1)
        cov_b = z_b.T @ z_b / (n - 1)
'''),
    "invariance summed over the features": _vr("invariance = np.mean((z_a - z_b) ** 2)",
                                               "invariance = np.mean(np.sum((z_a - z_b) ** 2, axis=1))"),
    "pins gamma": _vr("np.mean(np.maximum(c.gamma - std_a, 0.0)) + 0.5 * np.mean(np.maximum(c.gamma - std_b, 0.0))",
                      "np.mean(np.maximum(1.0 - std_a, 0.0)) + 0.5 * np.mean(np.maximum(1.0 - std_b, 0.0))"),
    "inputs centred in place": _vr('''        a = z_a - z_a.mean(axis=0)
        b = z_b - z_b.mean(axis=0)
''', '''        a = z_a
        a -= a.mean(axis=0)
        b = z_b
        b -= b.mean(axis=0)
'''),
}
VR_RIGHT = {
    "np.cov and np.var, branch by branch": VR_HEAD + '''        cfg = self.cfg.loss
        d = z_a.shape[1]
        total = cfg.sim_coeff * float(np.square(z_a - z_b).mean())
        for z in (z_a, z_b):
            std = np.sqrt(np.var(z, axis=0, ddof=1) + cfg.eps)
            total += cfg.std_coeff * 0.5 * float(np.clip(cfg.gamma - std, 0.0, None).mean())
            cov = np.atleast_2d(np.cov(z, rowvar=False))
            total += cfg.cov_coeff * float((np.sum(cov ** 2) - np.sum(np.diag(cov) ** 2)) / d)
        return total
''',
    "std from the covariance diagonal, pairs in loops": VR_HEAD + '''        cfg = self.cfg.loss

        def branch_terms(z):
            n, d = z.shape
            zc = z - z.sum(axis=0) / n
            cov = np.einsum("ni,nj->ij", zc, zc) / (n - 1)
            std = np.sqrt(np.diagonal(cov) + cfg.eps)
            hinge = np.maximum(0.0, cfg.gamma - std).sum() / d
            off = 0.0
            for i in range(d):
                for j in range(d):
                    if i != j:
                        off += cov[i, j] ** 2
            return hinge, off / d

        hinge_a, off_a = branch_terms(z_a)
        hinge_b, off_b = branch_terms(z_b)
        sim = ((z_a - z_b) ** 2).sum() / z_a.size
        return float(cfg.sim_coeff * sim + cfg.std_coeff * (hinge_a + hinge_b) / 2 + cfg.cov_coeff * (off_a + off_b))
''',
}


def vr_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls on general settings: other coefficients, targets and eps, embeddings whose spreads are above and below
    the target, correlated dimensions, an offset mean, a dimension collapsed to a constant, a batch of two; each
    gives the loss and the two arrays the caller holds afterwards."""
    rng = np.random.default_rng(89)
    calls = []
    for n, d, coeffs, spread, offset, collapse in ((32, 6, (25.0, 25.0, 1.0, 1.0, 1e-4), 1.0, 0.0, False),
                                                   (16, 4, (10.0, 5.0, 2.0, 1.5, 1e-4), 0.7, 2.0, False),
                                                   (12, 5, (1.0, 25.0, 0.5, 1.0, 0.1), 1.3, -1.0, True),
                                                   (2, 3, (25.0, 25.0, 1.0, 0.5, 1e-4), 1.0, 0.5, False),
                                                   (20, 8, (3.0, 1.0, 4.0, 2.0, 1e-3), 0.5, 3.0, True),
                                                   (9, 2, (0.0, 10.0, 1.0, 1.0, 1e-4), 2.0, 0.0, False)):
        mix = np.eye(d) + 0.6 * rng.normal(size=(d, d))
        z_a = offset + spread * rng.normal(size=(n, d)) * rng.uniform(0.3, 1.7, size=d) @ mix
        z_b = z_a + 0.3 * rng.normal(size=(n, d))
        if collapse:
            z_a[:, 0] = 0.7
        cfg = SimpleNamespace(loss=SimpleNamespace(sim_coeff=coeffs[0], std_coeff=coeffs[1], cov_coeff=coeffs[2],
                                                   gamma=coeffs[3], eps=coeffs[4]))

        def call(cfg=cfg, z_a=z_a, z_b=z_b) -> object:
            a, b = z_a.copy(), z_b.copy()
            return ns["VICRegLoss"](cfg)(a, b), a, b

        calls.append(call)
    return calls


# -- Class-balanced loss from the effective number of samples (Cui et al. 2019) ------------------------------------

CB_SIG = 'def class_balanced_loss(logits, labels, samples_per_class, beta=0.9999, loss_type="softmax"):\n'
CB_BODY = '''    counts = np.asarray(samples_per_class, dtype=float)
    effective = 1.0 - np.power(beta, counts)
    weights = np.zeros_like(counts)
    seen = counts > 0
    weights[seen] = (1.0 - beta) / effective[seen]
    weights = weights * len(counts) / weights.sum()
    w = weights[labels]
    if loss_type == "softmax":
        shifted = logits - logits.max(axis=1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        per_example = -logp[np.arange(len(labels)), labels]
    elif loss_type == "sigmoid":
        onehot = np.eye(logits.shape[1])[labels]
        bce = np.maximum(logits, 0.0) - logits * onehot + np.log1p(np.exp(-np.abs(logits)))
        per_example = bce.sum(axis=1)
    else:
        raise ValueError(f"unknown loss_type {loss_type!r}")
    return float(np.mean(w * per_example))
'''
CB_DOC = '''    """Class-balanced loss (Cui et al. 2019) of ``logits`` (batch, C) against integer ``labels`` (batch,).

    ``samples_per_class`` (C counts, the training set's) gives each class c with n_c > 0 samples the inverse of
    its effective number of samples, ``w_c = (1 - beta) / (1 - beta ** n_c)`` (0 <= beta < 1); a class with no
    samples gets weight 0. The weights are then rescaled to sum to C. An example's loss is its class's weight
    times, for ``loss_type="softmax"``, the softmax cross-entropy of its logits, or, for ``"sigmoid"``, the binary
    cross-entropy of each logit's sigmoid against the one-hot label, summed over the C classes; any other
    ``loss_type`` raises ValueError. The result is the plain mean of the weighted losses over the batch (not
    divided by the sum of the weights), as a float. Logits may be large: both forms are computed stably.
    """
'''
CB_GOLDEN = "\n\n" + CB_SIG + CB_DOC + CB_BODY
CB_DRIVER = '''"""Train a linear classifier on long-tailed toy data, class-balanced: python train_longtail.py"""

import numpy as np

from balanced.losses import class_balanced_loss

COUNTS = [400, 120, 40, 12]


def main():
    rng = np.random.default_rng(0)
    centres = 1.5 * rng.normal(size=(len(COUNTS), 2))
    y_train = np.repeat(np.arange(len(COUNTS)), COUNTS)
    x_train = centres[y_train] + rng.normal(size=(len(y_train), 2))
    samples_per_class = np.bincount(y_train, minlength=len(COUNTS))
    w = np.zeros((2, len(COUNTS)))
    b = np.zeros(len(COUNTS))
    for step in range(5):
        idx = rng.choice(len(y_train), size=64, replace=False)
        x, y = x_train[idx], y_train[idx]
        loss = class_balanced_loss(x @ w + b, y, samples_per_class)
        grad_w = np.zeros_like(w)
        grad_b = np.zeros_like(b)
        for arr, grad in ((w, grad_w), (b, grad_b)):
            for i in np.ndindex(*arr.shape):
                arr[i] += 1e-5
                up = class_balanced_loss(x @ w + b, y, samples_per_class)
                arr[i] -= 1e-5
                grad[i] = (up - loss) / 1e-5
        w -= 0.5 * grad_w
        b -= 0.5 * grad_b
        pred = np.argmax(x_train @ w + b, axis=1)
        recall = [np.mean(pred[y_train == c] == c) for c in range(len(COUNTS))]
        print(f"step {step}: class-balanced loss {loss:.4f}, balanced accuracy {np.mean(recall):.3f}")


if __name__ == "__main__":
    main()
'''

_cb = editor(CB_SIG, CB_BODY)

CB_WRONG = {
    "weights not rescaled to the class count": _cb("    weights = weights * len(counts) / weights.sum()\n", ""),
    "pins beta": _cb("effective = 1.0 - np.power(beta, counts)", "effective = 1.0 - np.power(0.9999, counts)"),
    "effective number not inverted": _cb("weights[seen] = (1.0 - beta) / effective[seen]",
                                         "weights[seen] = effective[seen] / (1.0 - beta)"),
    "loss_type ignored": _cb('''    if loss_type == "softmax":
        shifted = logits - logits.max(axis=1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        per_example = -logp[np.arange(len(labels)), labels]
    elif loss_type == "sigmoid":
        onehot = np.eye(logits.shape[1])[labels]
        bce = np.maximum(logits, 0.0) - logits * onehot + np.log1p(np.exp(-np.abs(logits)))
        per_example = bce.sum(axis=1)
    else:
        raise ValueError(f"unknown loss_type {loss_type!r}")
''', '''    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    per_example = -logp[np.arange(len(labels)), labels]
'''),
    "sigmoid loss averaged over the classes": _cb("per_example = bce.sum(axis=1)", "per_example = bce.mean(axis=1)"),
    "mean weighted by the weights' sum": _cb("return float(np.mean(w * per_example))",
                                             "return float(np.sum(w * per_example) / np.sum(w))"),
    "softmax without the shift": _cb('''        shifted = logits - logits.max(axis=1, keepdims=True)
        logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
''', '''        logp = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
'''),
    "sigmoid through the log of the sigmoid": _cb(
        "bce = np.maximum(logits, 0.0) - logits * onehot + np.log1p(np.exp(-np.abs(logits)))",
        "p = 1.0 / (1.0 + np.exp(-logits))\n        bce = -(onehot * np.log(p) + (1.0 - onehot) * np.log(1.0 - p))"),
    "no weight 0 for a class without samples": _cb('''    weights = np.zeros_like(counts)
    seen = counts > 0
    weights[seen] = (1.0 - beta) / effective[seen]
''', '''    weights = (1.0 - beta) / effective
'''),
}
CB_RIGHT = {
    "example by example": CB_SIG + '''    raw = []
    for n in samples_per_class:
        raw.append(0.0 if n == 0 else (1.0 - beta) / (1.0 - beta ** n))
    scale = len(raw) / sum(raw)
    total = 0.0
    for row, y in zip(logits, labels):
        weight = raw[y] * scale
        if loss_type == "softmax":
            top = max(row)
            lse = top + math.log(sum(math.exp(v - top) for v in row))
            total += weight * (lse - row[y])
        elif loss_type == "sigmoid":
            s = 0.0
            for k, z in enumerate(row):
                target = 1.0 if k == y else 0.0
                s += max(z, 0.0) - z * target + math.log1p(math.exp(-abs(z)))
            total += weight * s
        else:
            raise ValueError(loss_type)
    return float(total / len(labels))
''',
    "logaddexp forms": CB_SIG + '''    n = np.asarray(samples_per_class, dtype=float)
    with np.errstate(divide="ignore"):
        inv = np.where(n > 0, (1.0 - beta) / (1.0 - beta ** n), 0.0)
    inv = inv * (n.size / inv.sum())
    rows = np.arange(len(labels))
    if loss_type == "softmax":
        per = np.logaddexp.reduce(logits, axis=1) - logits[rows, labels]
    elif loss_type == "sigmoid":
        hit = np.arange(logits.shape[1])[None, :] == np.asarray(labels)[:, None]
        per = np.where(hit, np.logaddexp(0.0, -logits), np.logaddexp(0.0, logits)).sum(axis=1)
    else:
        raise ValueError(f"loss_type {loss_type}")
    return float(inv[labels] @ per / len(labels))
''',
}


def cb_check(ns: dict[str, Any]) -> list[Callable[[], object]]:
    """Calls of ``class_balanced_loss`` on general inputs: other betas (0 among them), counts from balanced to
    steeply long-tailed, a class with no samples (among the labels too), the sigmoid form, large logits for both
    forms, and a ``loss_type`` that is neither."""
    rng = np.random.default_rng(97)
    f = ns["class_balanced_loss"]
    calls = []
    for counts, beta, loss_type, scale, batch in (([500, 200, 80, 30, 10], 0.9999, "softmax", 2.0, 16),
                                                  ([50, 5, 0, 20], 0.99, "softmax", 1.5, 12),
                                                  ([10, 10, 3], 0.9, "sigmoid", 1.0, 8),
                                                  ([1000, 1, 40, 7, 0, 2], 0.999, "sigmoid", 60.0, 10),
                                                  ([30, 300], 0.0, "softmax", 900.0, 6),
                                                  ([100, 20, 5], 0.5, "focal", 1.0, 5),
                                                  ([8, 64, 512], 0.9999, "sigmoid", 3.0, 9)):
        c = len(counts)
        logits = scale * rng.normal(size=(batch, c))
        labels = rng.integers(0, c, size=batch)
        labels[:c] = np.arange(min(c, batch))
        n = np.array(counts)
        calls.append(lambda z=logits, y=labels, n=n, b=beta, k=loss_type: f(z.copy(), y.copy(), n.copy(), b, k))
    return calls


_NP = "import numpy as np\n\n\n"
_MATH_NP = "import math\n\nimport numpy as np\n\n\n"
TASKS: list[dict[str, Any]] = [
    {"name": "34-DDPMSampleStep", "files": {"diffusion/__init__.py": "", "diffusion/gaussian.py":
     '"""Gaussian diffusion over numpy arrays."""\n\nimport numpy as np\n' + DP_GOLDEN, "sample.py": DP_DRIVER},
     "function": "diffusion/gaussian.py::GaussianDiffusion.p_sample", "command": "python sample.py",
     "head": _MATH_NP, "wrong": DP_WRONG, "right": DP_RIGHT, "check": dp_check,
     "gaps": {"previous alpha-bar wraps at t = 0": ["np.maximum(t - 1, 0)", "t > 0"],
              "noise added at t = 0": ["nonzero", "t > 0"],
              "noise gated on the first sample's timestep": ["nonzero", "(t > 0).reshape(shape)"],
              "Algorithm 2's mean, clipping lost": ["clip_denoised", "np.clip(x0, -1.0, 1.0)"],
              "clip flag ignored": ["clip_denoised"], "variance type ignored": ["var_type"],
              "variance used as the standard deviation": ["np.sqrt(var)"],
              "alpha for its square root in the mean": ["np.sqrt(alpha)"],
              "schedule broadcast for flat samples only": ["x_t.ndim - 1", "shape = (-1,) + (1,) * (x_t.ndim - 1)"]}},
    {"name": "35-VICRegLoss", "files": {"vicreg/__init__.py": "", "vicreg/config.py": VR_CONFIG, "vicreg/loss.py":
     '"""Self-supervised objectives."""\n\nimport numpy as np\n' + VR_GOLDEN, "pretrain.py": VR_DRIVER},
     "function": "vicreg/loss.py::VICRegLoss.__call__", "command": "python pretrain.py", "head": _NP,
     "wrong": VR_WRONG, "right": VR_RIGHT, "check": vr_check,
     "gaps": {"biased standard deviation": ["(n - 1) + c.eps"], "eps outside the square root": ["eps", "c.eps"],
              "hinge on the variance": ["np.sqrt(np.sum(a ** 2, axis=0) / (n - 1) + c.eps)"],
              "covariance diagonal kept": ["~np.eye(d, dtype=bool)"],
              "covariance averaged over the off-diagonal pairs": ["np.sum(cov_a[off] ** 2) / d"],
              "covariance of uncentred embeddings": ["a.T @ a", "z_a - z_a.mean(axis=0)"],
              "invariance summed over the features": ["np.mean((z_a - z_b) ** 2)"], "pins gamma": ["gamma"],
              "inputs centred in place": ["z_a - z_a.mean(axis=0)"]}},
    {"name": "36-ClassBalancedLoss", "files": {"balanced/__init__.py": "", "balanced/losses.py":
     '"""Losses for long-tailed classification."""\n\nimport numpy as np\n' + CB_GOLDEN,
     "train_longtail.py": CB_DRIVER},
     "function": "balanced/losses.py::class_balanced_loss", "command": "python train_longtail.py",
     "head": _MATH_NP, "wrong": CB_WRONG, "right": CB_RIGHT, "check": cb_check,
     "gaps": {"weights not rescaled to the class count": ["len(counts) / weights.sum()"], "pins beta": ["beta"],
              "effective number not inverted": ["(1.0 - beta) / effective[seen]"],
              "loss_type ignored": ["loss_type"], "sigmoid loss averaged over the classes": ["bce.sum(axis=1)"],
              "mean weighted by the weights' sum": ["np.mean(w * per_example)"],
              "softmax without the shift": ["logits.max(axis=1, keepdims=True)"],
              "sigmoid through the log of the sigmoid": ["np.log1p(np.exp(-np.abs(logits)))"],
              "no weight 0 for a class without samples": ["seen", "counts > 0"]}},
]
"""The eighth fresh held-out tasks."""
