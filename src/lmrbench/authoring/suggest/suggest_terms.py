"""The words that code and a paper share: identifiers split at snake_case and camelCase, prose lowercased, Greek
symbols named (``σ`` is ``sigma``, as code spells it), common abbreviations of code expanded (``temp`` also counts
as ``temperature``), plurals folded, stop words (English and Python's own) dropped.

Both sides of the ranking (``suggest_rank``) go through ``terms``, so a paper's ``softmax temperatures τ`` and a
function's ``tau`` / ``temperature`` meet. Source code goes in as it is: its names, comments and strings are words,
its operators and numbers are not.
"""

from __future__ import annotations

import functools
import keyword
import re

GREEK = {
    "α": "alpha", "β": "beta", "γ": "gamma", "Γ": "gamma", "δ": "delta", "Δ": "delta", "ε": "epsilon",
    "ϵ": "epsilon", "ζ": "zeta", "η": "eta", "θ": "theta", "Θ": "theta", "ι": "iota", "κ": "kappa",
    "λ": "lambda", "Λ": "lambda", "μ": "mu", "ν": "nu", "ξ": "xi", "π": "pi", "Π": "pi", "ρ": "rho",
    "σ": "sigma", "Σ": "sigma", "τ": "tau", "υ": "upsilon", "φ": "phi", "ϕ": "phi", "Φ": "phi", "χ": "chi",
    "ψ": "psi", "Ψ": "psi", "ω": "omega", "Ω": "omega", "∇": "gradient", "∑": "sum", "∏": "product",
    "√": "sqrt", "∞": "infinity", "∂": "partial",
}  # fmt: skip
"""Symbols of equations and the names code gives them."""

ABBREVIATIONS = {
    "temp": "temperature", "tau": "temperature", "lr": "learning rate", "grad": "gradient", "grads": "gradient",
    "prob": "probability", "probs": "probability", "num": "number", "dim": "dimension", "dims": "dimension",
    "avg": "average", "std": "standard deviation", "var": "variance", "cov": "covariance", "eps": "epsilon",
    "lam": "lambda", "lmbda": "lambda", "reg": "regularization", "norm": "normalize", "attn": "attention",
    "emb": "embedding", "embs": "embedding", "feat": "feature", "feats": "feature", "pos": "positive",
    "neg": "negative", "sim": "similarity", "dist": "distance", "kl": "kullback leibler divergence",
    "ce": "cross entropy", "nll": "negative log likelihood", "mse": "mean squared error", "ema": "moving average",
    "logp": "log probability", "logps": "log probability", "logprob": "log probability",
    "logprobs": "log probability", "ref": "reference",
    "src": "source", "tgt": "target", "seq": "sequence", "len": "length", "idx": "index", "w": "weight",
    "thr": "threshold", "wd": "weight decay", "mom": "momentum", "iter": "iteration", "iters": "iteration",
    "init": "initialize", "ctx": "context", "tok": "token", "toks": "token", "obs": "observation",
    "rew": "reward", "adv": "advantage", "val": "value", "pred": "prediction", "preds": "prediction",
}  # fmt: skip
"""Short names in code and the paper's words for them (the short name is kept too)."""

_STOP_TEXT = """
    a about above after again against all also an and any are as at be because been before being below between
    both but by can could did do does doing down during each either else few for from further given had has have
    having here how however i if in into is it its itself just may might more most much must no nor not now of off
    on once only or other our ours out over own per same shall should since so some such than that the their them
    then there these they this those through thus to too under until up upon us very via was we were what when
    where whether which while who whom why will with within without would yet you your one two three first second
    let use used using see show shows shown table figure fig section sec eq equation et al ie eg e g paper work
    self cls none true false return def class import from print args kwargs np numpy torch int float str bool list
    dict tuple range len isinstance super object type np_ array arrays asarray ndarray shape dtype value values
"""
STOP_WORDS = frozenset(_STOP_TEXT.split()) | frozenset(keyword.kwlist)
"""Words that say nothing about a method: English function words, paper boilerplate, Python's own names."""

_WORD = re.compile(r"[A-Za-z]+|[^\x00-\x7f]")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def split_identifier(name: str) -> list[str]:
    """``logSoftmaxTemp_2`` -> ``["log", "softmax", "temp", "2"]``: snake_case and camelCase parts, lowercased."""
    out: list[str] = []
    for part in name.split("_"):
        out += [m.group().lower() for m in _CAMEL.finditer(part)]
    return out


def fold(word: str) -> str:
    """A word's plural folded onto its singular (``losses`` -> ``loss``, ``probabilities`` -> ``probability``)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@functools.lru_cache(maxsize=1 << 16)
def word_terms(raw: str, expand: bool) -> tuple[str, ...]:
    """The terms of one word of a text (an identifier, a Greek letter); see ``terms``."""
    if raw in GREEK:
        parts = [GREEK[raw]]
    elif raw.isascii():
        parts = split_identifier(raw)
    else:
        return ()
    out: list[str] = []
    for part in parts:
        if expand and part in ABBREVIATIONS:
            out += [fold(w) for w in ABBREVIATIONS[part].split()]
        word = fold(part)
        if len(part) > 1 and word not in STOP_WORDS:
            out.append(word)
    return tuple(out)


def terms(text: str, *, expand: bool = False) -> list[str]:
    """The index terms of a text (prose or source code): split, lowercased, Greek named, folded, stop words
    dropped. ``expand`` adds the paper's words for code's abbreviations."""
    out: list[str] = []
    for m in _WORD.finditer(text):
        out += word_terms(m.group(), expand)
    return out
