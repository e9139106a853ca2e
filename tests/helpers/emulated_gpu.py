"""Research functions written in numpy, and a GPU's matmul precision emulated on the CPU, for the tests and the
benchmark of grading across devices (``tests/authoring/test_precision_modes.py``, ``benchmarks/cross_device.py``):
each golden function with a plausible wrong variant, and ``record``, which makes a case file as ``task record``
does (the precision notes of ``probe_call``, the ties of ``has_ties``) with its matrix products' inputs rounded to
TF32's 10 or bfloat16's 7 mantissa bits."""

from __future__ import annotations

import io
import json

import numpy as np

from lmrbench.runtime.lmrbench_precision import has_ties, probe_call, round_mantissa, with_emulated_matmuls
from lmrbench.runtime.lmrbench_values import Case, Encoder, read_case_file, write_case


def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def attention(q, k, v):
    return softmax(q @ k.swapaxes(-1, -2) / np.float32(np.sqrt(q.shape[-1]))) @ v


def attention_by_d(q, k, v):
    return softmax(q @ k.swapaxes(-1, -2) / np.float32(q.shape[-1])) @ v


def causal(q, k, v):
    t = q.shape[-2]
    s = q @ k.swapaxes(-1, -2) / np.float32(np.sqrt(q.shape[-1]))
    return softmax(np.where(np.triu(np.ones((t, t), bool), 1), np.float32(-np.inf), s)) @ v


def causal_diagonal_masked(q, k, v):
    t = q.shape[-2]
    s = q @ k.swapaxes(-1, -2) / np.float32(np.sqrt(q.shape[-1]))
    return softmax(np.where(np.triu(np.ones((t, t), bool), 0), np.float32(-1e4), s)) @ v


def log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def smoothed_ce(h, w, labels, eps=0.1):
    logp = log_softmax(h @ w)
    nll = -np.take_along_axis(logp, labels[:, None], -1)[:, 0]
    return np.float32(((1 - eps) * nll - eps * logp.mean(-1)).mean())


def unsmoothed_ce(h, w, labels):
    return smoothed_ce(h, w, labels, eps=0.0)


def mlp_layernorm(x, w1, w2):
    a = x @ w1
    h = (0.5 * a * (1 + np.tanh(np.float32(0.7978845608) * (a + np.float32(0.044715) * a**3)))) @ w2
    mu, var = h.mean(-1, keepdims=True), h.var(-1, keepdims=True)
    return (h - mu) / np.sqrt(var + np.float32(1e-5))


def mlp_relu(x, w1, w2):
    h = np.maximum(x @ w1, 0) @ w2
    return (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + np.float32(1e-5))


def sequence_logps(h, w, labels):
    logp = log_softmax(h @ w)
    per = np.take_along_axis(logp, np.maximum(labels, 0)[..., None], -1)[..., 0]
    return (per * (labels != -100)).sum(-1)


def token_mean_logps(h, w, labels):
    mask = labels != -100
    return sequence_logps(h, w, labels) / mask.sum(-1).astype(np.float32)


def greedy(h, w):
    return (h @ w).argmax(-1)


def greedy_argmin(h, w):
    return (h @ w).argmin(-1)


def plain(value):
    """``value`` as a plain ndarray (not the subclass that rounds matmul inputs)."""
    return np.asarray(value).view(np.ndarray) if isinstance(value, np.ndarray) else value


class Dropped(Exception):
    """The recorder keeps no case of this call: it is precision-sensitive (the message says what moved)."""


def record(fn, args, *, context=None, bits=None, notes=True):
    """A case file as ``task record`` writes it for ``fn(*args)``, the golden run computing its products in
    ``bits`` mantissa bits (a GPU's TF32 or bfloat16 matmuls), its precision noted as ``context``; ``Dropped``
    where the recorder would not keep the call."""
    ran = with_emulated_matmuls(list(args), bits) if bits else list(args)
    result = plain(fn(*ran))
    enc = Encoder()
    names = [f"arg{i}" for i in range(len(args))]
    arguments = [{"name": n, "kind": "positional_only", "value": enc.encode(v, n)}
                 for n, v in zip(names, args, strict=True)]
    out = Encoder("out")
    case = {"format": "lmrbench-case", "version": 1, "target": "m.py::f", "binding": "function",
            "arguments": arguments, "self": None, "expected": out.encode(result, "result"),
            "changed": {}, "self_after": None, "random_state": None}
    arrays = {**enc.arrays, **out.arrays}
    if notes:
        ties = [n for n, v in zip(names, args, strict=True) if has_ties(v)]
        if ties:
            case["ties"] = ties

        def rerun(transform):
            copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            return fn(*(transform(copies) if transform else copies))

        found, extra = probe_call(rerun, result, args, context=context)
        if found.get("sensitive"):
            raise Dropped(found["sensitive"])
        if found:
            case["precision"] = found
            arrays.update(extra)
    data = write_case(json.loads(json.dumps(case)), arrays)
    return Case(*read_case_file(io.BytesIO(data)))


def top_p(logits, p=0.9):
    order = np.argsort(-logits, axis=-1, kind="stable")
    s = np.take_along_axis(logits, order, -1)
    c = np.cumsum(softmax(s), -1)
    remove = np.concatenate([np.zeros_like(c[:, :1], bool), c[:, :-1] > p], -1)
    out = np.empty_like(logits)
    np.put_along_axis(out, order, np.where(remove, np.float32(-np.inf), s), -1)
    return out


def top_p_cutoff_unshifted(logits, p=0.9):
    """Wrong: the token that crosses p is dropped too."""
    order = np.argsort(-logits, axis=-1, kind="stable")
    s = np.take_along_axis(logits, order, -1)
    remove = np.cumsum(softmax(s), -1) > p
    out = np.empty_like(logits)
    np.put_along_axis(out, order, np.where(remove, np.float32(-np.inf), s), -1)
    return out


def top_p_in_bfloat16(logits, p=0.9):
    """A nucleus filter computed in its logits' precision, as torch computes one over bfloat16 logits: float32
    logits stand for bfloat16 ones, their probabilities and running sum rounded to bfloat16's 7 mantissa bits
    (float64 logits, a float64 re-run's, compute exactly). Its cutoff is decided by that rounding."""
    order = np.argsort(-logits, axis=-1, kind="stable")
    s = np.take_along_axis(logits, order, -1)
    rounded = (lambda a: round_mantissa(a, 7)) if logits.dtype == np.float32 else (lambda a: a)
    c = rounded(np.cumsum(rounded(softmax(s)), -1))
    remove = np.concatenate([np.zeros_like(c[:, :1], bool), c[:, :-1] > p], -1)
    out = np.empty_like(logits)
    np.put_along_axis(out, order, np.where(remove, -np.inf, s).astype(logits.dtype), -1)
    return out
