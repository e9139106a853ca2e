"""Deterministic toy contextual embeddings: a per-token vector plus a little of its neighbours."""

import hashlib
import math
from collections import Counter

import numpy as np

DIM = 16


def token_vector(token):
    """A fixed pseudo-random unit-variance vector for a token, seeded by its hash."""
    seed = int.from_bytes(hashlib.sha256(token.encode("utf-8")).digest()[:8], "little")
    return np.random.default_rng(seed).normal(size=DIM)


def embed(sentence):
    """Embeddings of shape (tokens, DIM): each token's vector mixed with 0.25 of its neighbours'."""
    tokens = sentence.lower().split()
    base = np.stack([token_vector(t) for t in tokens])
    mixed = base.copy()
    mixed[1:] += 0.25 * base[:-1]
    mixed[:-1] += 0.25 * base[1:]
    return mixed


def idf_weights(corpus):
    """idf(w) = log((M + 1) / (df(w) + 1)) over the reference corpus, as in BERTScore."""
    df = Counter()
    for sentence in corpus:
        df.update(set(sentence.lower().split()))
    m = len(corpus)
    return {w: math.log((m + 1) / (c + 1)) for w, c in df.items()}, math.log(m + 1)


def sentence_idf(sentence, idf, default):
    """The idf weight of each token of a sentence (unknown tokens get ``default``)."""
    return np.array([idf.get(t, default) for t in sentence.lower().split()])
