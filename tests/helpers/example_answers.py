"""Answers to the bundled examples that a model might write: wrong in the ways an outside review found passing
(DPO's beta left out of the conservative term, contrastive decoding's plausibility mask on untempered logits,
BERTScore's F1 set to 0 whenever a side is non-positive), and right in another style. Each is a whole goal file,
by task: ``{task: {name: (goal file, source)}}``."""

from __future__ import annotations

DPO_HEAD = '''import numpy as np

from dpo.mathutil import log_sigmoid


def preference_loss(policy_chosen_logps, policy_rejected_logps, reference_chosen_logps,
                    reference_rejected_logps, beta, label_smoothing=0.0, reference_free=False):
    """DPO loss, conservative and reference-free variants, implicit rewards."""
    logits = policy_chosen_logps - policy_rejected_logps
    if not reference_free:
        logits = logits - (reference_chosen_logps - reference_rejected_logps)
'''
DPO_REWARDS = '''    chosen = beta * (policy_chosen_logps - reference_chosen_logps)
    rejected = beta * (policy_rejected_logps - reference_rejected_logps)
    return losses, chosen, rejected
'''
CD_HEAD = '''import numpy as np


def log_softmax(logits, axis=-1):
    shifted = logits - logits.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def contrastive_scores(expert_logits, amateur_logits, alpha=0.1, temperature=1.0):
    """Contrastive objective with the adaptive plausibility constraint."""
    expert_lp = log_softmax(expert_logits / temperature)
    amateur_lp = log_softmax(amateur_logits / temperature)
'''
BERT_HEAD = '''import numpy as np


def greedy_cos_idf(ref_embedding, ref_idf, hyp_embedding, hyp_idf):
    """Idf-weighted greedy cosine precision, recall and F1."""
'''
BERT_MATCH = '''    sim = hyp @ ref.T
    precision = float((sim.max(axis=1) * hyp_idf).sum() / hyp_idf.sum())
    recall = float((sim.max(axis=0) * ref_idf).sum() / ref_idf.sum())
'''
BERT_NORMS = '''    ref = ref_embedding / np.linalg.norm(ref_embedding, axis=-1, keepdims=True)
    hyp = hyp_embedding / np.linalg.norm(hyp_embedding, axis=-1, keepdims=True)
'''

WRONG = {
    "1-DPO": {
        "beta 0.1 in the conservative term": ("dpo/trainers.py", DPO_HEAD + '''\
    losses = -log_sigmoid(beta * logits) * (1 - label_smoothing) - log_sigmoid(-0.1 * logits) * label_smoothing
''' + DPO_REWARDS),
        "smoothing weights swapped": ("dpo/trainers.py", DPO_HEAD + '''\
    losses = -log_sigmoid(beta * logits) * label_smoothing - log_sigmoid(-beta * logits) * (1 - label_smoothing)
''' + DPO_REWARDS),
    },
    "2-BERTScore": {
        "F1 0 whenever a side is non-positive": ("bertscore_np/score.py", BERT_HEAD + BERT_NORMS + BERT_MATCH + '''\
    if precision <= 0 or recall <= 0:
        return precision, recall, 0.0
    return precision, recall, 2 * precision * recall / (precision + recall)
'''),
    },
    "3-ContrastiveDecoding": {
        "plausibility mask on untempered logits": ("cdecode/decoding.py", CD_HEAD + '''\
    raw = log_softmax(expert_logits)
    keep = raw >= np.log(alpha) + raw.max(axis=-1, keepdims=True)
    return np.where(keep, expert_lp - amateur_lp, -np.inf)
'''),
    },
}
"""Plausible wrong answers the bundled examples' tests must fail."""

RIGHT = {
    "1-DPO": {
        "softplus form": ("dpo/trainers.py", DPO_HEAD + '''\
    z = beta * logits
    losses = (1 - label_smoothing) * np.logaddexp(0.0, -z) + label_smoothing * np.logaddexp(0.0, z)
''' + DPO_REWARDS),
    },
    "2-BERTScore": {
        "norms with an epsilon": ("bertscore_np/score.py", BERT_HEAD + '''\
    ref = ref_embedding / (np.linalg.norm(ref_embedding, axis=-1, keepdims=True) + 1e-12)
    hyp = hyp_embedding / (np.linalg.norm(hyp_embedding, axis=-1, keepdims=True) + 1e-12)
''' + BERT_MATCH + '''\
    if precision + recall == 0:
        return precision, recall, 0.0
    return precision, recall, 2 * precision * recall / (precision + recall)
'''),
    },
    "3-ContrastiveDecoding": {
        "probabilities against alpha times the largest": ("cdecode/decoding.py", CD_HEAD + '''\
    probs = np.exp(expert_lp)
    keep = probs >= alpha * probs.max(axis=-1, keepdims=True)
    return np.where(keep, expert_lp - amateur_lp, -np.inf)
'''),
    },
}
"""Correct answers in another style that the same tests must pass."""
