"""Contrastive decoding: prefer tokens the expert likes much more than the amateur, among plausible ones."""

import numpy as np


def log_softmax(logits, axis=-1):
    """Log-softmax along ``axis``."""
    shifted = logits - logits.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def contrastive_scores(expert_logits, amateur_logits, alpha=0.1, temperature=1.0):
    """Score every next token by the contrastive objective, for a batch of positions.

    The plausibility constraint keeps only tokens whose expert probability is at least ``alpha`` times the
    largest expert probability at that position; the others get -inf. Plausible tokens are scored by the
    difference of expert and amateur log-probabilities, both at the given temperature.

    Args:
        expert_logits: next-token logits of the expert model, shape (batch, vocab).
        amateur_logits: next-token logits of the amateur model, shape (batch, vocab).
        alpha: the plausibility threshold in (0, 1].
        temperature: softmax temperature applied to both models' logits.

    Returns:
        The scores, shape (batch, vocab), with -inf for implausible tokens.
    """
    expert_lp = log_softmax(expert_logits / temperature)
    amateur_lp = log_softmax(amateur_logits / temperature)
    cutoff = np.log(alpha) + expert_lp.max(axis=-1, keepdims=True)
    scores = expert_lp - amateur_lp
    return np.where(expert_lp >= cutoff, scores, -np.inf)


def greedy_decode(expert, amateur, prompt_ids, steps, alpha=0.1, temperature=1.0):
    """Append ``steps`` tokens to each prompt, each the argmax of the contrastive scores."""
    seqs = [list(p) for p in prompt_ids]
    for _ in range(steps):
        scores = contrastive_scores(expert.logits(seqs), amateur.logits(seqs), alpha, temperature)
        for seq, best in zip(seqs, scores.argmax(axis=-1)):
            seq.append(int(best))
    return seqs
