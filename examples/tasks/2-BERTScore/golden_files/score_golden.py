"""Greedy cosine matching between candidate and reference token embeddings."""

import numpy as np


def greedy_cos_idf(ref_embedding, ref_idf, hyp_embedding, hyp_idf):
    """Compute BERTScore precision, recall and F1 for one candidate against one reference.

    Each candidate token is matched to its most similar reference token (precision), and each reference token to
    its most similar candidate token (recall), by cosine similarity; the matches are averaged with idf weights.

    Args:
        ref_embedding: reference token embeddings, shape (ref_len, dim).
        ref_idf: idf weight of each reference token, shape (ref_len,).
        hyp_embedding: candidate token embeddings, shape (hyp_len, dim).
        hyp_idf: idf weight of each candidate token, shape (hyp_len,).

    Returns:
        A tuple (precision, recall, f1) of floats.
    """
    ref = ref_embedding / np.linalg.norm(ref_embedding, axis=-1, keepdims=True)
    hyp = hyp_embedding / np.linalg.norm(hyp_embedding, axis=-1, keepdims=True)
    sim = hyp @ ref.T
    word_precision = sim.max(axis=1)
    word_recall = sim.max(axis=0)
    hyp_weights = hyp_idf / hyp_idf.sum()
    ref_weights = ref_idf / ref_idf.sum()
    precision = float((word_precision * hyp_weights).sum())
    recall = float((word_recall * ref_weights).sum())
    if precision + recall == 0:
        return precision, recall, 0.0
    f1 = 2 * precision * recall / (precision + recall)
    return precision, recall, f1
