"""Numerically stable helpers."""

import numpy as np


def log_sigmoid(x):
    """log(1 / (1 + exp(-x))) without overflow."""
    x = np.asarray(x, dtype=np.float64)
    return -np.logaddexp(0.0, -x)


def sequence_logps(token_logits, labels):
    """Sum over positions of the log-probability of each label token (batch, seq, vocab) -> (batch,)."""
    shifted = token_logits - token_logits.max(axis=-1, keepdims=True)
    logprobs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(logprobs, labels[..., None], axis=-1)[..., 0]
    return picked.sum(axis=-1)
