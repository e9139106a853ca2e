"""Grading that holds across devices and precision modes, held on the CPU: TF32 and bfloat16 matmuls emulated with
numpy (inputs rounded to 10 and 7 mantissa bits, ``lmrbench_precision.emulated_matmul``), ties in quantised
logits broken the other way, and a long cumulative sum. A case made as ``task record`` makes it (precision notes
from ``probe_call``, ties from ``has_ties``) grades a correct float32 candidate as passing and plausible wrong
variants as failing; a case recorded before (no notes) grades as it did."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest

from helpers.emulated_gpu import (
    Dropped,
    attention,
    attention_by_d,
    causal,
    causal_diagonal_masked,
    greedy,
    greedy_argmin,
    mlp_layernorm,
    mlp_relu,
    plain,
    record,
    sequence_logps,
    smoothed_ce,
    softmax,
    token_mean_logps,
    top_p,
    top_p_cutoff_unshifted,
    top_p_in_bfloat16,
    unsmoothed_ce,
)
from lmrbench.runtime import RUNTIME_DIR
from lmrbench.runtime.lmrbench_checkers import assert_close
from lmrbench.runtime.lmrbench_precision import PROBE_ENV, round_mantissa, with_emulated_matmuls
from lmrbench.runtime.lmrbench_values import Case, read_case_file


@pytest.fixture(autouse=True)
def _process_without_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests emulate a GPU's precision in a process without torch, as CI's is. On a machine with torch, a
    worker that imported it for another module (``test_torch_values``) would give the checkers torch's grading
    context (seen on a GPU machine: three of them failed there); the real torch modes are ``test_torch_precision``'s."""
    monkeypatch.delitem(sys.modules, "torch", raising=False)


GPU_TF32 = {"device": "cuda:0", "float32_matmul_precision": "highest", "tf32_matmul": True, "tf32_cudnn": True,
            "autocast": None, "deterministic": False}
GPU_BF16_AUTOCAST = {**GPU_TF32, "tf32_matmul": False, "autocast": "bfloat16"}


def passes(fn, case):
    try:
        assert_close(fn(*case.args, **case.kwargs), case.expected, scale=case.scale)
    except AssertionError:
        return False
    return True


def _inputs(name, rng):
    r = lambda *s, scale=1.0: (rng.standard_normal(s) * scale).astype(np.float32)  # noqa: E731
    labels = rng.integers(0, 500, (4, 24))
    labels[:, :5] = -100
    return {
        "attention": [r(2, 4, 64, 32), r(2, 4, 64, 32), r(2, 4, 64, 32)],
        "ce": [r(96, 64), r(64, 500, scale=0.5), rng.integers(0, 500, 96)],
        "mlp": [r(16, 256), r(256, 512, scale=0.06), r(512, 256, scale=0.06)],
        "logps": [r(4, 24, 64), r(64, 500, scale=0.5), labels],
        "greedy": [r(32, 64), r(64, 500, scale=0.5)],
    }[name]


VARIANTS = [
    ("attention", attention, attention_by_d),
    ("attention", causal, causal_diagonal_masked),
    ("ce", smoothed_ce, unsmoothed_ce),
    ("mlp", mlp_layernorm, mlp_relu),
    ("logps", sequence_logps, token_mean_logps),
    ("greedy", greedy, greedy_argmin),
]


@pytest.mark.parametrize(("context", "bits"), [(GPU_TF32, 10), (GPU_BF16_AUTOCAST, 7)], ids=["tf32", "bf16"])
@pytest.mark.parametrize(("inputs", "golden", "wrong"), VARIANTS, ids=[v[2].__name__ for v in VARIANTS])
def test_a_case_recorded_with_emulated_gpu_matmuls_grades_float32_right_both_ways(inputs, golden, wrong, context,
                                                                                  bits):
    case = record(golden, _inputs(inputs, np.random.default_rng(0)), context=context, bits=bits)
    assert passes(golden, case), "the float32 golden code fails its own recording made with rounded matmuls"
    assert not passes(wrong, case)


def test_without_the_precision_notes_float32_fails_a_tf32_recording_as_it_did():
    """Why the notes: a case recorded before (no precision) keeps the old tolerance, which TF32 rounding exceeds."""
    args = _inputs("mlp", np.random.default_rng(0))
    assert not passes(mlp_layernorm, record(mlp_layernorm, args, bits=10, notes=False))
    assert passes(mlp_layernorm, record(mlp_layernorm, args, context=GPU_TF32, bits=10))


def test_the_matmul_allowance_follows_the_precision_not_every_float32_value():
    """A float32 recording (no TF32 anywhere) keeps float32's tolerance: TF32-sized errors fail it."""
    args = _inputs("attention", np.random.default_rng(1))
    case = record(attention, args, context={**GPU_TF32, "tf32_matmul": False})
    assert passes(attention, case)
    tf32_result = plain(attention(*with_emulated_matmuls([a.copy() for a in args], 10)))
    with pytest.raises(AssertionError, match=r"precision: recorded on cuda:0, float32 matmuls"):
        assert_close(tf32_result, case.expected, scale=case.scale)


def test_rounding_to_tf32_and_bfloat16_keeps_10_and_7_mantissa_bits():
    x = np.array([1 + 2**-10 + 2**-12, 1 + 2**-11, 1 + 3 * 2**-11, -np.inf, np.nan], np.float32)
    assert round_mantissa(x, 10)[:3].tolist() == [1 + 2**-10, 1.0, 1 + 2**-9]  # nearest, ties to even
    assert round_mantissa(x, 7)[0] == 1.0 and np.isneginf(round_mantissa(x, 7)[3])


# ---------------------------------------------------------------------------------------------------- ties


def quantised_logits(rng, rows=8, vocab=400):
    return (np.round(rng.standard_normal((rows, vocab)) * 3 * 4) / 4).astype(np.float32)  # many equal logits


def top_p_read_backwards(logits, p=0.9):
    """Correct: an ascending stable sort read backwards, so equal logits come in the other order."""
    order = np.argsort(logits, axis=-1, kind="stable")[:, ::-1]
    s = np.take_along_axis(logits, order, -1)
    c = np.cumsum(softmax(s), -1)
    keep = np.concatenate([np.ones_like(c[:, :1], bool), c[:, :-1] <= p], -1)
    out = np.full_like(logits, -np.inf)
    np.put_along_axis(out, order, np.where(keep, s, np.float32(-np.inf)), -1)
    return out


def top_p_mask(logits, p=0.9):
    return np.isfinite(top_p(logits, p))


def top_p_mask_backwards(logits, p=0.9):
    return np.isfinite(top_p_read_backwards(logits, p))


def top_k_indices(logits, k=20):
    return np.argsort(-logits, axis=-1, kind="stable")[:, :k]


def top_k_indices_backwards(logits, k=20):
    return np.argsort(logits, axis=-1, kind="stable")[:, ::-1][:, :k]


def top_k_one_short(logits, k=20):
    return np.argsort(-logits, axis=-1, kind="stable")[:, 1 : k + 1]


def last_argmax(logits):
    return logits.shape[-1] - 1 - logits[:, ::-1].argmax(-1)


def argmin(logits):
    return logits.argmin(-1)


TIES = [
    (top_p, top_p_read_backwards, top_p_cutoff_unshifted),
    (top_p_mask, top_p_mask_backwards, lambda x: np.isfinite(top_p_cutoff_unshifted(x))),
    (top_k_indices, top_k_indices_backwards, top_k_one_short),
    (lambda x: x.argmax(-1), last_argmax, argmin),
]


@pytest.mark.parametrize(("golden", "other_order", "wrong"), TIES, ids=["nucleus", "mask", "topk", "argmax"])
def test_a_candidate_that_breaks_ties_the_other_way_passes_and_a_wrong_cutoff_fails(golden, other_order, wrong):
    logits = quantised_logits(np.random.default_rng(3))
    case = record(golden, [logits])
    assert case.data["ties"] == ["arg0"]
    assert not np.array_equal(other_order(logits), case.expected), "the fixture breaks no tie differently"
    assert passes(other_order, case)
    assert not passes(wrong, case)


def test_validate_measures_no_tolerance_used_by_a_tie_broken_the_other_way(monkeypatch):
    """The margin ``validate`` reads from a float64 re-run: another member of a tied run kept is 0, not infinite."""
    logits = quantised_logits(np.random.default_rng(3))
    case = record(top_p, [logits])
    monkeypatch.setenv(PROBE_ENV, "measure")
    with pytest.raises(AssertionError, match=r"^lmrbench-tolerance-margin 0 at result$"):
        assert_close(top_p_read_backwards(logits), case.expected, scale=case.scale)
    with pytest.raises(AssertionError) as wrong:
        assert_close(top_p_cutoff_unshifted(logits), case.expected, scale=case.scale)
    assert float(str(wrong.value).split()[1]) > 1e300  # a token kept as -inf: far beyond any tolerance


def test_a_case_recorded_before_ties_were_noted_compares_exactly_as_it_did():
    logits = quantised_logits(np.random.default_rng(3))
    assert not passes(top_p_read_backwards, record(top_p, [logits], notes=False))


def test_a_tie_in_another_row_does_not_excuse_a_difference():
    logits = quantised_logits(np.random.default_rng(4), rows=2, vocab=8)
    logits[0] = np.arange(8, dtype=np.float32)  # row 0: no ties
    case = record(top_k_indices, [logits])
    swapped = top_k_indices(logits)
    swapped[0, [0, 1]] = swapped[0, [1, 0]]
    with pytest.raises(AssertionError, match=r"values differ"):
        assert_close(swapped, case.expected, scale=case.scale)


# ------------------------------------------------------------------------------- precision-sensitive cases


def bfloat16_logits(rng, rows=8, vocab=4000):
    return round_mantissa(rng.standard_normal((rows, vocab)) * 3, 7)  # bfloat16's values: many equal logits


def test_a_nucleus_filter_whose_cutoff_bfloat16_rounding_decides_is_dropped_at_record():
    """Probabilities and running sum in bfloat16: the float64 re-run keeps other tokens than the rounding does, by
    more than a tie; a correct rewrite or another device rounds otherwise, while a wrong cutoff is one token off."""
    logits = bfloat16_logits(np.random.default_rng(6))
    with pytest.raises(Dropped, match=r"^result: the cutoff moves by up to \d+ entr(y|ies) a row \(\d+ kept in "
                                      r"float32, \d+ in float64\)$"):
        record(top_p_in_bfloat16, [logits])


def test_a_nucleus_filter_over_bfloat16_logits_with_float32_probabilities_is_kept_and_grades_both_ways():
    """The same tied logits filtered by float32 probabilities (generation code casts the scores): a clear cutoff."""
    logits = bfloat16_logits(np.random.default_rng(6))
    case = record(top_p, [logits])
    assert case.data["ties"] == ["arg0"]
    assert passes(top_p_read_backwards, case)
    assert not passes(top_p_cutoff_unshifted, case)


def test_an_argmax_that_tf32_matmuls_flip_is_dropped_at_record():
    h = np.array([[1.0, 0.5]], np.float32)
    w = np.array([[1.0, 1.0002], [0.0, 0.0]], np.float32)  # logits 1.0 and 1.0002: equal in TF32
    with pytest.raises(Dropped, match=r"^result: 1 of 1 indices differ in TF32 matmuls from float32$"):
        record(greedy, [h, w], context={"device": "cpu"})
    assert greedy(h, w).tolist() == [1]


def test_the_recorder_keeps_no_precision_sensitive_call_and_says_so(tmp_path):
    """``task record``'s recorder: the bfloat16-decided call is noted as skipped with what moved, the next call of the
    same function (float64 logits, an exact cutoff) is kept."""
    program = f"""
import json, os, sys
sys.path[:0] = [{str(RUNTIME_DIR)!r}, {str(RUNTIME_DIR.parents[2] / "tests")!r}]
import numpy as np
import lmrbench_record as rec
from helpers.emulated_gpu import top_p_in_bfloat16
from lmrbench_precision import round_mantissa
state = rec._State({{"targets": [{{"file": "m.py", "qualname": "f"}}], "max_calls": 2}}, {str(tmp_path)!r},
                   {str(tmp_path)!r})
wrapped = rec._wrap(top_p_in_bfloat16, "function", None, "m.py::f", state)
logits = round_mantissa(np.random.default_rng(6).standard_normal((8, 4000)) * 3, 7)
wrapped(logits)
wrapped(logits.astype(np.float64))
print(json.dumps({{"skipped": state.skipped, "saved": state.saved, "dropped": state.dropped}}))
"""
    done = subprocess.run([sys.executable, "-c", program], check=True, capture_output=True, text=True)
    out = json.loads(done.stdout)
    assert out["saved"] == {"m.py::f": 1} and out["dropped"] == {"m.py::f": 1}
    (note,) = out["skipped"]
    assert note["message"].startswith("m.py::f: call not kept: precision-sensitive: result: the cutoff moves by up to")
    assert note["precision"].startswith("result: the cutoff moves")
    (case_file,) = tmp_path.glob("case-*.npz")
    assert Case(*read_case_file(case_file)).argument("logits").dtype == np.float64


# ----------------------------------------------------------------------------------------- accumulations


def running_total(x):
    return np.cumsum(x, -1)


def running_total_pairwise(x):
    """Correct, in another order: blocks of 1,000 summed, then their running totals added (as a GPU scan does)."""
    blocks = x.reshape(x.shape[0], -1, 1000).astype(np.float32)
    inner = np.cumsum(blocks, -1)
    offsets = np.concatenate([np.zeros_like(inner[:, :1, -1]), np.cumsum(inner[:, :-1, -1], -1)], -1)
    return (inner + offsets[..., None]).reshape(x.shape)


def running_total_scaled(x):
    return np.cumsum(x, -1) * np.float32(1.001)


def test_a_long_cumulative_sum_gets_the_tolerance_the_float64_probe_measures():
    x = np.random.default_rng(5).standard_normal((2, 100_000)).astype(np.float32)
    case = record(running_total, [x])
    assert "grown" in case.data["precision"]
    assert passes(running_total_pairwise, case)
    assert not passes(running_total_scaled, case)
    assert not passes(running_total_pairwise, record(running_total, [x], notes=False)), "the old fixed rtol failed"


def test_the_recorder_notes_ties_and_the_float64_probe_in_the_case(tmp_path):
    """``task record``'s own recorder, in a process of its own: the case it writes carries the notes."""
    program = f"""
import json, os, sys
sys.path.insert(0, {str(RUNTIME_DIR)!r})
os.environ["LMRBENCH_OUT"] = {str(tmp_path)!r}
import numpy as np
import lmrbench_record as rec
state = rec._State({{"targets": [{{"file": "m.py", "qualname": "f"}}], "max_calls": 1}}, {str(tmp_path)!r},
                   {str(tmp_path)!r})
def f(logits):
    return np.cumsum(logits, -1), logits.argmax(-1)
wrapped = rec._wrap(f, "function", None, "m.py::f", state)
wrapped((np.round(np.random.default_rng(0).standard_normal((2, 50_000)) * 8) / 8).astype(np.float32))
"""
    subprocess.run([sys.executable, "-c", program], check=True, capture_output=True, text=True)
    (case_file,) = tmp_path.glob("case-*.npz")
    case = Case(*read_case_file(case_file))
    assert case.data["ties"] == ["logits"]
    assert "context" not in case.data["precision"]  # numpy: no precision mode to note
    assert list(case.data["precision"]["grown"]) == ["result[0]"]
    assert case.scale.tied and case.scale.grown["result[0]"].shape == (2, 1)  # one atol per row


def test_validate_names_a_golden_failing_its_recording_in_another_precision_with_the_margin():
    """The checker's message says where the case was recorded and graded; validate's reason names the precision."""
    from lmrbench.benchmark.validation.tolerance import precision_sensitive
    from lmrbench.schemas.testrun import TestCaseResult, TestReport, TestStatus

    args = _inputs("mlp", np.random.default_rng(0))
    case = record(mlp_layernorm, args, context={**GPU_TF32, "tf32_matmul": False})
    tf32_result = plain(mlp_layernorm(*with_emulated_matmuls([a.copy() for a in args], 10)))
    with pytest.raises(AssertionError) as failed:
        assert_close(tf32_result, case.expected, scale=case.scale)

    def report(message):
        return TestReport(status=TestStatus.FAILED, sandbox="local", cases=[
            TestCaseResult(test_id="unit_test/unit_test_1.py::test_case_2", outcome="failed", duration=0.1,
                           message=message)])

    reason = precision_sensitive(report(str(failed.value)))
    assert reason is not None and reason.startswith("precision-sensitive: the golden code fails its own recording "
                                                    "in test_case_2 (recorded on cuda:0, float32 matmuls, graded on "
                                                    "no torch)")
    assert re.search(r"the largest difference is [0-9.e+]+ times its tolerance", reason)
    assert precision_sensitive(report("result: 3 of 16 values differ")) is None  # not the precision's doing
