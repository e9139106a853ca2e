"""The DPO objective and a tiny trainer for a log-linear policy over token sequences."""

import numpy as np

from dpo.mathutil import log_sigmoid, sequence_logps


def preference_loss(
    policy_chosen_logps,
    policy_rejected_logps,
    reference_chosen_logps,
    reference_rejected_logps,
    beta,
    label_smoothing=0.0,
    reference_free=False,
):
    """Compute the DPO loss for a batch of policy and reference model log probabilities.

    Args:
        policy_chosen_logps: log probabilities of the policy for the chosen responses, shape (batch,).
        policy_rejected_logps: log probabilities of the policy for the rejected responses, shape (batch,).
        reference_chosen_logps: log probabilities of the reference model for the chosen responses.
        reference_rejected_logps: log probabilities of the reference model for the rejected responses.
        beta: temperature of the DPO loss, typically between 0.1 and 0.5.
        label_smoothing: the assumed probability that a preference label is flipped (conservative DPO).
        reference_free: if True, ignore the reference model (an implicit uniform reference).

    Returns:
        A tuple (losses, chosen_rewards, rejected_rewards), each of shape (batch,).
    """
    # TODO: Implement this function
    raise NotImplementedError


class LogLinearPolicy:
    """A policy whose next-token logits are a linear function of a one-hot of the previous token."""

    def __init__(self, vocab_size, seed=0):
        rng = np.random.default_rng(seed)
        self.weights = rng.normal(scale=0.1, size=(vocab_size, vocab_size))

    def token_logits(self, tokens):
        """Logits of each next token given the previous one, shape (batch, seq, vocab)."""
        return self.weights[tokens]

    def logps(self, prompts, responses):
        """Summed log-probability of each response token given the previous token."""
        context = np.concatenate([prompts[:, -1:], responses[:, :-1]], axis=1)
        return sequence_logps(self.token_logits(context), responses)


def dpo_step(policy, reference, batch, beta, lr, label_smoothing=0.0, reference_free=False, eps=1e-4):
    """One step of finite-difference gradient descent on the mean DPO loss; returns the loss before the step."""

    def mean_loss():
        losses, _, _ = preference_loss(
            policy.logps(batch["prompt"], batch["chosen"]),
            policy.logps(batch["prompt"], batch["rejected"]),
            reference.logps(batch["prompt"], batch["chosen"]),
            reference.logps(batch["prompt"], batch["rejected"]),
            beta,
            label_smoothing=label_smoothing,
            reference_free=reference_free,
        )
        return float(losses.mean())

    base = mean_loss()
    grad = np.zeros_like(policy.weights)
    rows = np.unique(np.concatenate([batch["prompt"][:, -1], batch["chosen"].ravel(), batch["rejected"].ravel()]))
    for i in rows:
        for j in range(policy.weights.shape[1]):
            policy.weights[i, j] += eps
            grad[i, j] = (mean_loss() - base) / eps
            policy.weights[i, j] -= eps
    policy.weights -= lr * grad
    return base
