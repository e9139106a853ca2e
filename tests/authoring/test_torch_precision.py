"""Precision notes of torch programs: the context the recorder reads from torch, TF32 rounding of matmul inputs in a
torch function mode, and a case recorded by ``task record``'s own recorder that grades a TF32-rounded result and a
tie broken the other way as passing, and a wrong cutoff as failing (on the CPU: the mode emulates the GPU).

Skipped where torch is not installed (the host); run with a torch environment:
``PYTHONPATH=src <venv>/bin/python -m pytest --noconftest -o addopts= tests/authoring/test_torch_precision.py``.
"""

from __future__ import annotations

import glob
import os
import sys

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

from lmrbench.runtime import RUNTIME_DIR  # noqa: E402

sys.path.insert(0, str(RUNTIME_DIR))  # the recorder imports its siblings by their shipped names
import lmrbench_precision as lp  # noqa: E402
import lmrbench_record as rec  # noqa: E402
import lmrbench_values as lv  # noqa: E402
from lmrbench_checkers import assert_close  # noqa: E402


def record(fn, *args, tmp_path):
    state = rec._State({"targets": [{"file": "m.py", "qualname": fn.__name__}], "max_calls": 1}, str(tmp_path),
                       str(tmp_path))
    rec._wrap(fn, "function", None, f"m.py::{fn.__name__}", state)(*args)
    (path,) = glob.glob(os.path.join(tmp_path, "case-*.npz"))
    return lv.Case(*lv.read_case_file(path))


def test_the_context_names_device_tf32_autocast_and_determinism():
    ctx = lp.capture_context([torch.ones(2)])
    assert ctx["device"] == "cpu" and ctx["autocast"] is None
    assert {"float32_matmul_precision", "tf32_matmul", "deterministic"} <= set(ctx)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert lp.capture_context([torch.ones(2)])["autocast"] == "bfloat16"
    assert lp.matmul_unit({**ctx, "device": "cuda:0", "tf32_matmul": True}) == 2.0**-11
    assert lp.matmul_unit(ctx) == 2.0**-24


def test_the_mode_rounds_matmul_inputs_to_ten_mantissa_bits():
    a, b = torch.randn(8, 64), torch.randn(64, 4)
    with lp._RoundMatmuls(torch, 10):
        got = a @ b
    want = torch.from_numpy(lp.round_mantissa(a.numpy(), 10)) @ torch.from_numpy(lp.round_mantissa(b.numpy(), 10))
    assert torch.equal(got, want) and not torch.equal(got, a @ b)


def mlp(x, w1, w2):
    return torch.nn.functional.layer_norm(torch.nn.functional.gelu(x @ w1) @ w2, (w2.shape[-1],))


def test_a_float32_recording_grades_a_tf32_result_by_the_matmul_probe(tmp_path):
    g = torch.Generator().manual_seed(0)
    x, w1, w2 = torch.randn(16, 256, generator=g), torch.randn(256, 512, generator=g) * 0.06, \
        torch.randn(512, 256, generator=g) * 0.06
    case = record(mlp, x, w1, w2, tmp_path=tmp_path)
    assert "matmul" in case.data["precision"]
    with lp._RoundMatmuls(torch, 10):
        tf32 = mlp(x, w1, w2)
    with pytest.raises(AssertionError):  # graded as float32: TF32 rounding is far outside
        assert_close(tf32, case.expected, scale=case.scale)
    saved = lp.grading_context
    lp.grading_context = lambda actual=None: {"device": "cuda:0", "tf32_matmul": True}  # a GPU with TF32 on
    try:
        assert_close(tf32, case.expected, scale=case.scale)
        with pytest.raises(AssertionError):
            assert_close(torch.nn.functional.layer_norm(torch.relu(x @ w1) @ w2, (256,)), case.expected,
                         scale=case.scale)
    finally:
        lp.grading_context = saved


def top_p(logits, p=0.9, in_float32=True):
    """A nucleus filter over bfloat16 logits whose probabilities are float32, as generation code that casts the
    scores to float32 computes them (``in_float32=False``: in the logits' own precision)."""
    s, i = torch.sort(logits, descending=True, dim=-1, stable=True)
    remove = (s.float() if in_float32 else s).softmax(-1).cumsum(-1) > p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    return logits.clone().scatter_(-1, i, s.masked_fill(remove, float("-inf")))


def test_ties_in_bfloat16_logits_may_be_broken_either_way(tmp_path):
    logits = (torch.randn(4, 2000, generator=torch.Generator().manual_seed(1)) * 3).bfloat16()
    case = record(top_p, logits, tmp_path=tmp_path)
    assert case.data["ties"] == ["logits"]
    s, i = torch.sort(logits, descending=False, dim=-1, stable=True)
    s, i = s.flip(-1), i.flip(-1)  # ascending, read backwards: equal logits the other way round
    remove = s.float().softmax(-1).cumsum(-1) > 0.9
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    other = logits.clone().scatter_(-1, i, s.masked_fill(remove, float("-inf")))
    assert not torch.equal(other, case.expected)
    assert_close(other, case.expected, scale=case.scale)
    wrong = logits.clone().scatter_(-1, i, s.masked_fill(s.float().softmax(-1).cumsum(-1) > 0.9, float("-inf")))
    with pytest.raises(AssertionError):
        assert_close(wrong, case.expected, scale=case.scale)


def test_a_nucleus_filter_whose_cutoff_bfloat16_rounding_decides_is_not_kept(tmp_path):
    """Probabilities and their running sum in bfloat16: the float64 re-run keeps another number of tokens, so the
    recorder keeps no case and says what moved."""
    logits = (torch.randn(8, 32000, generator=torch.Generator().manual_seed(0)) * 3).bfloat16()
    state = rec._State({"targets": [{"file": "m.py", "qualname": "top_p"}], "max_calls": 1}, str(tmp_path),
                       str(tmp_path))
    rec._wrap(top_p, "function", None, "m.py::top_p", state)(logits, 0.9, False)
    assert not glob.glob(os.path.join(tmp_path, "case-*.npz"))
    (note,) = state.skipped
    assert note["message"].startswith("m.py::top_p: call not kept: precision-sensitive: result: the cutoff moves")
    assert "kept in bfloat16" in note["precision"] and "in float64" in note["precision"]


def top_p_as_cuda_autocast(logits, p=0.9):
    """A nucleus filter over bfloat16 logits whose softmax and running sum run in float32 under autocast only, as
    CUDA's autocast runs them (a CPU's keeps bfloat16): the cutoff depends on the device's autocast policy."""
    return top_p(logits, p, in_float32=torch.is_autocast_enabled("cpu"))


def test_a_cutoff_that_autocast_decides_is_not_kept(tmp_path):
    """Recorded under autocast, the result agrees with float64 (its probabilities were float32) but not with the
    same call in its inputs' own dtype: another device's autocast may not upcast, so the call is not kept."""
    logits = (torch.randn(8, 32000, generator=torch.Generator().manual_seed(0)) * 3).bfloat16()
    state = rec._State({"targets": [{"file": "m.py", "qualname": "f"}], "max_calls": 1}, str(tmp_path),
                       str(tmp_path))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        rec._wrap(top_p_as_cuda_autocast, "function", None, "m.py::f", state)(logits)
    assert not glob.glob(os.path.join(tmp_path, "case-*.npz"))
    (note,) = state.skipped
    assert "kept in bfloat16 autocast" in note["precision"] and "in its inputs' dtypes" in note["precision"]
