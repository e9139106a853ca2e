"""Grading across devices and precision modes: typical research functions recorded on one device and graded on the
other, through lmrbench's own recorder, codec, reply decoder and checkers.

For each function (attention, causal attention, a label-smoothed cross-entropy, an MLP with LayerNorm, DPO's
per-sequence log-probs, a top-p filter over bfloat16 logits with ties computed in bfloat16 and one with float32
probabilities, a float32 top-p, greedy argmax over tied logits, a cumulative sum over 100,000 values) and each
setting (default; TF32 matmuls; bfloat16 autocast), the golden function is recorded on device A by
``lmrbench_record`` (the case file a task would hold: its precision context, the float64 and matmul probes, the
tied inputs), and the golden code and a plausible wrong variant (1/d
instead of 1/sqrt(d), the diagonal masked, label smoothing dropped, a per-token mean instead of a sum, the cutoff
token dropped, argmin, a sum 0.1% off) run on device B; their results cross the reply decoder and are judged by
``assert_close(result, case.expected, scale=case.scale)``, as a generated test does. Then the reverse (B -> A).

Devices: with CUDA, A is the GPU and B the CPU. Without CUDA (emulated mode), B is the CPU and A the CPU
computing its matrix products with inputs rounded to TF32's 10 (bfloat16 autocast: 7) mantissa bits (there the
recorder's own matmul probe runs inside that rounding, so A's recordings note no TF32 movement); without torch
at all, the same in numpy, and the cases are made with ``lmrbench_precision.probe_call`` given the context the
GPU would have noted. Prints one line per function and setting and a summary: golden-against-golden failures
(a correct program failing its own recording on the other device), wrong variants passing, and the recordings
the recorder did not keep as precision-sensitive (a cutoff its own rounding decides: "dropped at record:
precision-sensitive (cutoff moves 46 entries a row)"), which are no comparison.

    PYTHONPATH=src python benchmarks/cross_device.py [--small]

Needs numpy (and torch for the torch modes) and nothing else of lmrbench's install: it imports only the runtime
modules, which run where lmrbench is not installed.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = ROOT / "src" / "lmrbench" / "runtime"
sys.path[:0] = [str(RUNTIME), str(ROOT / "src"), str(ROOT / "tests")]

try:
    import torch
except ImportError:
    torch = None

import lmrbench_precision as lp  # noqa: E402
import lmrbench_record as rec  # noqa: E402
import lmrbench_reply  # noqa: E402
import lmrbench_values as lv  # noqa: E402
from lmrbench_checkers import assert_close  # noqa: E402

import helpers.emulated_gpu as gpu  # noqa: E402  # numpy functions, for the emulated mode without torch

SETTINGS = ("default", "tf32", "bf16-autocast")
"""The precision modes; the issue's target is no golden failure in the first two."""


# --------------------------------------------------------------------------------------------- torch functions


def torch_cases(small: bool) -> list[tuple[str, Any, Any, Any]]:
    """(name, golden, wrong, make inputs) for the torch functions."""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(0)

    def rnd(*shape: int, scale: float = 1.0, dtype: Any = torch.float32) -> Any:
        return (torch.randn(*shape, generator=g) * scale).to(dtype)

    def attn(q: Any, k: Any, v: Any) -> Any:
        return torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]), dim=-1) @ v

    def attn_by_d(q: Any, k: Any, v: Any) -> Any:
        return torch.softmax(q @ k.transpose(-1, -2) / q.shape[-1], dim=-1) @ v

    def causal(q: Any, k: Any, v: Any) -> Any:
        t = q.shape[-2]
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=q.device), 1)
        s = (q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])).masked_fill(mask, float("-inf"))
        return torch.softmax(s, dim=-1) @ v

    def causal_diagonal_masked(q: Any, k: Any, v: Any) -> Any:
        t = q.shape[-2]
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool, device=q.device), 0)
        s = (q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])).masked_fill(mask, -1e4)
        return torch.softmax(s, dim=-1) @ v

    def ce_smoothed(h: Any, w: Any, labels: Any) -> Any:
        return F.cross_entropy(h @ w, labels, ignore_index=-100, label_smoothing=0.1)

    def ce_unsmoothed(h: Any, w: Any, labels: Any) -> Any:
        return F.cross_entropy(h @ w, labels, ignore_index=-100, label_smoothing=0.0)

    def mlp_ln(x: Any, w1: Any, w2: Any) -> Any:
        return F.layer_norm(F.gelu(x @ w1) @ w2, (w2.shape[-1],))

    def mlp_relu(x: Any, w1: Any, w2: Any) -> Any:
        return F.layer_norm(F.relu(x @ w1) @ w2, (w2.shape[-1],))

    def logps(logits: Any, labels: Any) -> Any:
        labels = labels[:, 1:].clone()
        logits = logits[:, :-1, :]
        mask = labels != -100
        labels[labels == -100] = 0
        per = torch.gather(logits.log_softmax(-1), 2, labels.unsqueeze(2)).squeeze(2)
        return (per * mask).sum(-1)

    def logps_token_mean(logits: Any, labels: Any) -> Any:
        return logps(logits, labels) / (labels[:, 1:] != -100).sum(-1)

    def top_p(logits: Any, p: float = 0.9) -> Any:
        s, i = torch.sort(logits, descending=True, dim=-1)
        c = s.softmax(-1).cumsum(-1)
        remove = c > p
        remove[..., 1:] = remove[..., :-1].clone()
        remove[..., 0] = False
        return logits.clone().scatter_(-1, i, s.masked_fill(remove, float("-inf")))

    def top_p_cutoff_dropped(logits: Any, p: float = 0.9) -> Any:
        s, i = torch.sort(logits, descending=True, dim=-1)
        remove = s.softmax(-1).cumsum(-1) > p
        return logits.clone().scatter_(-1, i, s.masked_fill(remove, float("-inf")))

    def top_p_float32_probs(logits: Any, p: float = 0.9) -> Any:
        """bfloat16 logits (and their ties) filtered by float32 probabilities, as generation code that casts
        the scores to float32 does: the cutoff is clear at that precision."""
        s, i = torch.sort(logits, descending=True, dim=-1)
        remove = s.float().softmax(-1).cumsum(-1) > p
        remove[..., 1:] = remove[..., :-1].clone()
        remove[..., 0] = False
        return logits.clone().scatter_(-1, i, s.masked_fill(remove, float("-inf")))

    def top_p_float32_probs_cutoff_dropped(logits: Any, p: float = 0.9) -> Any:
        s, i = torch.sort(logits, descending=True, dim=-1)
        remove = s.float().softmax(-1).cumsum(-1) > p
        return logits.clone().scatter_(-1, i, s.masked_fill(remove, float("-inf")))

    def greedy(logits: Any) -> Any:
        return logits.argmax(-1)

    def greedy_argmin(logits: Any) -> Any:
        return logits.argmin(-1)

    def cumsum(x: Any) -> Any:
        return x.cumsum(-1)

    def cumsum_off(x: Any) -> Any:
        return x.cumsum(-1) * 1.001

    n = 4 if small else 1
    labels = torch.randint(0, 32000 // n, (16, 128 // n), generator=g)
    labels[:, : 20 // n] = -100
    bf_logits = rnd(8, 32000 // n, scale=3).bfloat16()
    return [
        ("attention_f32", attn, attn_by_d, lambda: [rnd(4, 8, 256 // n, 64) for _ in range(3)]),
        ("attention_causal_f32", causal, causal_diagonal_masked, lambda: [rnd(2, 8, 512 // n, 64) for _ in range(3)]),
        ("attention_bf16", attn, attn_by_d, lambda: [rnd(4, 8, 256 // n, 64, dtype=torch.bfloat16) for _ in range(3)]),
        ("cross_entropy_ls_f32", ce_smoothed, ce_unsmoothed,
         lambda: [rnd(16 * 128 // n, 256), rnd(256, 32000 // n, scale=0.1), labels.reshape(-1)]),
        ("mlp_layernorm_f32", mlp_ln, mlp_relu,
         lambda: [rnd(64, 1024 // n), rnd(1024 // n, 4096 // n, scale=0.03), rnd(4096 // n, 1024 // n, scale=0.03)]),
        ("batch_logps_f32", logps, logps_token_mean, lambda: [rnd(4, 128 // n, 32000 // n, scale=2), labels[:4]]),
        ("top_p_f32", top_p, top_p_cutoff_dropped, lambda: [rnd(8, 32000 // n, scale=3)]),
        ("top_p_bf16_ties", top_p, top_p_cutoff_dropped, lambda: [bf_logits.clone()]),
        ("top_p_bf16_f32_probs", top_p_float32_probs, top_p_float32_probs_cutoff_dropped,
         lambda: [bf_logits.clone()]),
        ("greedy_bf16_ties", greedy, greedy_argmin, lambda: [bf_logits.clone()]),
        ("cumsum_100k_f32", cumsum, cumsum_off, lambda: [rnd(4, 100_000)]),
    ]


class TorchDevice:
    """Where a torch function runs: a device, and whether its matmuls' inputs are rounded (emulated TF32/bf16)."""

    def __init__(self, name: str, kind: str, emulate_bits: int | None = None) -> None:
        self.name, self.kind, self.bits = name, kind, emulate_bits

    def put(self, args: list[Any]) -> list[Any]:
        return [a.to(self.kind) if isinstance(a, torch.Tensor) else a for a in args]

    def scope(self, setting: str) -> Any:
        """The setting's precision mode on this device, for the duration of a call."""
        return _TorchScope(self, setting)


class _TorchScope:
    def __init__(self, device: TorchDevice, setting: str) -> None:
        self.device, self.setting = device, setting
        self.stack: list[Any] = []

    def __enter__(self) -> None:
        if self.setting == "bf16-autocast":
            self.stack.append(torch.autocast(self.device.kind, dtype=torch.bfloat16))
        bits = self.device.bits if self.setting == "tf32" else (7 if self.device.bits else None)
        if bits and self.setting != "default":
            self.stack.append(lp._RoundMatmuls(torch, bits))
        for s in self.stack:
            s.__enter__()

    def __exit__(self, *exc: Any) -> None:
        for s in reversed(self.stack):
            s.__exit__(*exc)


def set_torch_setting(setting: str) -> None:
    """TF32 on or off for the whole process, as research code sets it at import."""
    tf32 = setting == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = True  # torch's default
    torch.set_float32_matmul_precision("high" if tf32 else "highest")


def record_torch(name: str, fn: Any, args: list[Any], device: TorchDevice, setting: str, emulated: bool) -> Any:
    """Record ``fn(*args)`` on ``device`` with ``task record``'s own recorder; the case as a test loads it."""
    with tempfile.TemporaryDirectory() as out:
        spec = {"targets": [{"file": "bench.py", "qualname": name}], "max_calls": 1, "max_bytes": 2_000_000_000,
                "checker": {"kind": "numeric", "tolerance": "dtype"}}
        state = rec._State(spec, out, out)
        wrapped = rec._wrap(fn, "function", None, f"bench.py::{name}", state)
        with torch.no_grad(), device.scope(setting):
            wrapped(*device.put(args))
        files = glob.glob(os.path.join(out, "case-*.npz"))
        dropped = [note["precision"] for note in state.skipped if note.get("precision")]
        if not files and dropped:
            raise gpu.Dropped(dropped[0])
        if not files:
            errors = [Path(f).read_text() for f in glob.glob(os.path.join(out, "error-*.json"))]
            raise RuntimeError(f"nothing recorded: {state.skipped or errors or 'no case'}")
        case = lv.Case(*lv.read_case_file(files[0]))
    if emulated and setting != "default" and device.bits:
        _note_emulated_context(case, setting)
    return case


def _note_emulated_context(case: Any, setting: str) -> None:
    """In emulated mode the 'GPU' is a CPU rounding its matmuls: note the context a GPU would have."""
    case.scale.context = {**(case.scale.context or {}), **emulated_context(setting)}


def grade_torch(fn: Any, args: list[Any], case: Any, device: TorchDevice, setting: str) -> tuple[str, str]:
    with torch.no_grad(), device.scope(setting):
        result = fn(*device.put(args))
    emulated = device.bits and setting != "default"
    with grading_as(emulated_context(setting) if emulated else None):
        return judge(over_the_wire(result), case)


# --------------------------------------------------------------------------------------------- numpy fallback


def numpy_cases(small: bool) -> list[tuple[str, Any, Any, Any]]:
    """The same functions in numpy (no torch here): emulated mode only."""
    rng = np.random.default_rng(0)

    def rnd(*shape: int, scale: float = 1.0) -> Any:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    n = 4 if small else 1
    tied = (np.round(rng.standard_normal((8, 32000 // n)) * 12) / 4).astype(np.float32)
    bf_logits = lp.round_mantissa(rng.standard_normal((8, 32000 // n)) * 3, 7)  # bfloat16's values, in float32
    return [
        ("attention_f32", gpu.attention, gpu.attention_by_d, lambda: [rnd(4, 8, 256 // n, 64) for _ in range(3)]),
        ("mlp_layernorm_f32", gpu.mlp_layernorm, gpu.mlp_relu,
         lambda: [rnd(64, 1024 // n), rnd(1024 // n, 4096 // n, scale=0.03), rnd(4096 // n, 1024 // n, scale=0.03)]),
        ("top_p_ties", gpu.top_p, gpu.top_p_cutoff_unshifted, lambda: [tied.copy()]),
        ("top_p_bf16_ties", gpu.top_p_in_bfloat16, gpu.top_p_cutoff_unshifted, lambda: [bf_logits.copy()]),
        ("greedy_ties", lambda x: x.argmax(-1), lambda x: x.argmin(-1), lambda: [tied.copy()]),
        ("cumsum_100k_f32", lambda x: np.cumsum(x, -1), lambda x: np.cumsum(x, -1) * np.float32(1.001),
         lambda: [rnd(4, 100_000)]),
    ]


def record_numpy(fn: Any, args: list[Any], bits: int | None, setting: str) -> Any:
    """A case as the recorder makes it, with the context a GPU in ``setting`` would note (numpy notes none)."""
    return gpu.record(fn, args, context=emulated_context(setting) if bits else {"device": "cpu"}, bits=bits)


def grade_numpy(fn: Any, args: list[Any], case: Any, bits: int | None, setting: str) -> tuple[str, str]:
    ran = lp.with_emulated_matmuls([a.copy() for a in args], bits) if bits else [a.copy() for a in args]
    with grading_as(emulated_context(setting) if bits else None):
        return judge(over_the_wire(gpu.plain(fn(*ran))), case)


def emulated_context(setting: str) -> dict[str, Any]:
    """The context a GPU in ``setting`` notes, for the CPU that plays it."""
    return {"device": "cuda:0 (emulated)", "tf32_matmul": setting == "tf32",
            "autocast": "bfloat16" if setting == "bf16-autocast" else None}


class grading_as:  # noqa: N801  # a context manager, named as one
    """In emulated mode the checkers cannot see that the CPU grading plays a GPU: tell them its context."""

    def __init__(self, context: dict[str, Any] | None) -> None:
        self.context = context

    def __enter__(self) -> None:
        self.saved = lp.grading_context
        if self.context is not None:
            lp.grading_context = lambda actual=None: self.context

    def __exit__(self, *exc: Any) -> None:
        lp.grading_context = self.saved


# --------------------------------------------------------------------------------------------- judging


def over_the_wire(value: Any) -> Any:
    """What the trusted side gets for ``value`` from the candidate's worker: JSON text, the allow-list decoder."""
    enc = lv.Encoder("r")
    node = json.loads(json.dumps(enc.encode(value, "result")))
    return lmrbench_reply.decode_reply(node, enc.arrays)


def judge(actual: Any, case: Any) -> tuple[str, str]:
    """("pass", the share of its tolerance the largest difference used) or ("FAIL", the checker's message)."""
    try:
        assert_close(actual, case.expected, scale=case.scale)
    except AssertionError as exc:
        return "FAIL", str(exc).splitlines()[0][:300] + _kept_counts(actual, case)
    os.environ[lp.PROBE_ENV] = "measure"  # the checkers' margin mode: how much of the tolerance was used
    try:
        assert_close(actual, case.expected, scale=case.scale)
        margin = ""
    except AssertionError as exc:
        margin = str(exc).removeprefix(lp.PROBE_MARK).split(" at ")[0].strip()
    finally:
        del os.environ[lp.PROBE_ENV]
    return "pass", margin


def _kept_counts(actual: Any, case: Any) -> str:
    """For a filter over tied inputs (top-p): each row's kept count here and in the recording. Equal counts: the
    rows differ in which tied values are kept; unequal: the cutoff itself moved (rounding of the cumulative sum)."""
    got, want = lp.as_float_array(actual), lp.as_float_array(case.expected)
    if not getattr(case.scale, "tied", None) or got is None or want is None:
        return ""  # not a filtered copy of the tied inputs (argmax's indices)
    if got.ndim != 2 or got.shape != want.shape or got.shape != case.scale.tied[0].shape:
        return ""
    a, e = np.isfinite(got).sum(-1), np.isfinite(want).sum(-1)
    return f" [kept per row: {a.tolist()} here, {e.tolist()} recorded]"


def recorded(record: Any, *how: Any) -> Any:
    """The case ``record(*how)`` makes, or the ``Dropped`` the recorder gave for a precision-sensitive call."""
    try:
        return record(*how)
    except gpu.Dropped as exc:
        return exc


def graded(grade: Any, fn: Any, args: list[Any], case: Any, on: Any, setting: str) -> tuple[str, str]:
    """``grade(fn, args, case, on, setting)``, or ("dropped", what moved) where the recorder kept no case."""
    if isinstance(case, gpu.Dropped):
        return "dropped", _moved(str(case))
    return grade(fn, args, case, on, setting)


def _moved(reason: str) -> str:
    """``cutoff moves 46 entries a row`` from the recorder's ``result: the cutoff moves by up to 46 entries...``."""
    found = re.search(r"the cutoff moves by up to (\d+) entr", reason)
    return f"cutoff moves {found.group(1)} entries a row" if found else reason


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="smaller inputs (a quick check on a laptop)")
    opts = parser.parse_args()
    cuda = torch is not None and torch.cuda.is_available()
    if torch is not None:
        mode = f"torch {torch.__version__}, " + (torch.cuda.get_device_name(0) if cuda else "no CUDA: emulated")
        a = TorchDevice("gpu", "cuda") if cuda else TorchDevice("cpu~tf32", "cpu", emulate_bits=10)
        b = TorchDevice("cpu", "cpu")
        cases = torch_cases(opts.small)
    else:
        mode = f"numpy {np.__version__} (no torch): emulated"
        cases = numpy_cases(opts.small or True)
    print(f"cross-device grading: {mode}; A = {'cuda' if cuda else 'cpu with rounded matmuls'}, B = cpu", flush=True)
    start = time.time()
    golden_fail: dict[str, int] = {s: 0 for s in SETTINGS}
    wrong_pass: dict[str, int] = {s: 0 for s in SETTINGS}
    compared: dict[str, int] = {s: 0 for s in SETTINGS}
    dropped: dict[str, int] = {s: 0 for s in SETTINGS}
    for setting in SETTINGS:
        if torch is not None:
            set_torch_setting(setting)
        for name, golden, wrong, make in cases:
            try:
                args = make()
                if torch is not None:
                    emulated = not cuda
                    rec_a = recorded(record_torch, name, golden, args, a, setting, emulated)
                    rec_b = recorded(record_torch, name, golden, args, b, setting, emulated)
                    grade, on_a, on_b = grade_torch, a, b
                else:
                    bits = {"default": None, "tf32": 10, "bf16-autocast": 7}[setting]
                    rec_a = recorded(record_numpy, golden, args, bits, setting)
                    rec_b = recorded(record_numpy, golden, args, None, setting)
                    grade, on_a, on_b = grade_numpy, bits, None
                rows = [graded(grade, golden, args, rec_a, on_b, setting),
                        graded(grade, golden, args, rec_b, on_a, setting),
                        graded(grade, wrong, args, rec_a, on_b, setting),
                        graded(grade, wrong, args, rec_b, on_a, setting)]
            except Exception:
                print(f"{setting:13s} {name:22s} ERROR\n{traceback.format_exc()}", flush=True)
                golden_fail[setting] += 2
                compared[setting] += 2
                continue
            g1, g2, w1, w2 = rows
            for r in (g1, g2):
                if r[0] == "dropped":
                    dropped[setting] += 1
                else:
                    compared[setting] += 1
                    golden_fail[setting] += r[0] == "FAIL"
            wrong_pass[setting] += (w1[0] == "pass") + (w2[0] == "pass")
            notes = "".join(f" | {what}: {r[1]}" for what, r in (("A->B", g1), ("B->A", g2)) if r[0] == "FAIL")
            kill = lambda r: {"FAIL": "killed", "pass": "PASSED"}.get(r[0], r[0])  # noqa: E731
            used = lambda r: f"{r[0]}({r[1]})" if r[0] == "pass" and r[1] else r[0]  # noqa: E731
            drops = "".join(f" | recorded on {where}: dropped at record: precision-sensitive ({r[1]})"
                            for where, r in (("A", g1), ("B", g2)) if r[0] == "dropped")
            print(f"{setting:13s} {name:22s} golden A->B {used(g1):12s} B->A {used(g2):12s} wrong A->B {kill(w1)} "
                  f"B->A {kill(w2)}{notes}{drops}", flush=True)
    for setting in SETTINGS:
        print(f"SUMMARY {setting:13s} golden-against-golden failures {golden_fail[setting]}/{compared[setting]}; "
              f"wrong variants passing {wrong_pass[setting]}/{compared[setting]}; "
              f"recordings dropped as precision-sensitive {dropped[setting]}")
    print(f"{time.time() - start:.1f} s")
    target = sum(golden_fail[s] for s in ("default", "tf32")) + sum(wrong_pass.values())
    return 0 if target == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
