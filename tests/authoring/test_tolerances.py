"""Tolerances that follow the recorded dtype and magnitude: a correct float32 rewrite in another order of operations
passes at large magnitudes, plausible wrong answers (a scale off by 1%, a term dropped) still fail."""

from __future__ import annotations

import io

import numpy as np
import pytest

from helpers.float_task import DROPPED, GOLDEN, REWRITE, SCALED, case_bytes, log_probs
from lmrbench.runtime.lmrbench_checkers import assert_close
from lmrbench.runtime.lmrbench_precision import PROBE_ENV, PROBE_MARK, tolerance_for
from lmrbench.runtime.lmrbench_values import Case, read_case_file


def function_of(source: str):
    namespace: dict = {}
    exec(compile(source, "dpo.py", "exec"), namespace)  # noqa: S102  # the fixture's own sources
    return namespace["dpo_loss"]


def load(args, beta) -> Case:
    return Case(*read_case_file(io.BytesIO(case_bytes(args, beta))))


def passes(source: str, case: Case, **tolerance) -> bool:
    result = function_of(source)(**case.kwargs)
    try:
        assert_close(result, case.expected, **tolerance)
    except AssertionError:
        return False
    return True


SETTINGS = [(200, 0.1), (1000, 0.5), (1000, 0.1), (5000, 0.1)]


@pytest.mark.parametrize(("magnitude", "beta"), SETTINGS)
def test_a_correct_float32_rewrite_passes_and_wrong_ones_fail_at_every_magnitude(magnitude, beta):
    cases = [load(log_probs(seed, magnitude), beta) for seed in range(40)]
    assert all(passes(REWRITE, c, scale=c.scale) for c in cases)
    assert not any(passes(SCALED, c, scale=c.scale) for c in cases)
    assert not any(passes(DROPPED, c, scale=c.scale) for c in cases)
    assert all(passes(GOLDEN, c, scale=c.scale) for c in cases)


def test_the_old_fixed_tolerance_failed_the_correct_rewrite_at_large_magnitudes():
    """Why the tolerance follows the magnitude: with rtol 1e-5 most batches of a correct program failed."""
    cases = [load(log_probs(seed, 1000), 0.5) for seed in range(40)]
    failed = sum(not passes(REWRITE, c, rtol=1e-5, atol=1e-8) for c in cases)
    assert failed > 20


def test_the_scale_is_the_inputs_rounding_unit_and_widens_atol_only_up_to_the_value():
    case = load(log_probs(1, 1000), 0.5)
    biggest = max(float(np.abs(a).max()) for a in case.kwargs.values() if isinstance(a, np.ndarray))
    assert case.scale == pytest.approx(np.finfo(np.float32).eps * biggest)
    assert tolerance_for("float32", case.scale, magnitude=10.0) == (3e-5, pytest.approx(case.scale))
    assert tolerance_for("float32", 1e3, magnitude=2.0) == (3e-5, 2e-3)  # a -1e9 mask cannot widen past 0.1%
    assert tolerance_for("float32") == (3e-5, 1e-6)
    assert tolerance_for("bfloat16") == (1.6e-2, 1e-5) and tolerance_for("float16") == (4e-3, 1e-5)
    assert tolerance_for("float64") == (1e-5, 1e-8)


def test_an_author_tolerance_is_kept_as_written():
    case = load(log_probs(3, 200), 0.1)
    assert not passes(GOLDEN.replace("beta * logits", "beta * logits * 1.000001"), case, rtol=0.0, atol=0.0)
    assert passes(GOLDEN, case, rtol=0.0, atol=0.0)


def test_half_precision_sums_in_another_order_pass_and_a_one_percent_error_fails():
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.normal(1.0, 0.5, 64).astype(np.float16)
        forward = np.float16(0)
        for v in x:
            forward = np.float16(forward + v)
        pairwise = x.sum(dtype=np.float16)
        assert_close(np.array([forward]), np.array([pairwise]))
        with pytest.raises(AssertionError, match="for float16"):
            assert_close(np.array([pairwise * np.float16(1.01)]), np.array([pairwise]))


def test_the_float64_probe_measures_the_margin_instead_of_judging(monkeypatch):
    monkeypatch.setenv(PROBE_ENV, "float64")
    case = load(log_probs(2, 1000), 0.5)
    assert all(a.dtype == np.float64 for a in case.kwargs.values() if isinstance(a, np.ndarray))
    assert case.scale == pytest.approx(np.finfo(np.float32).eps * max(
        float(np.abs(a).max()) for a in case.kwargs.values() if isinstance(a, np.ndarray)), rel=1e-6)
    result = function_of(GOLDEN)(**case.kwargs)
    with pytest.raises(AssertionError, match=PROBE_MARK) as raised:
        assert_close(result, case.expected, scale=case.scale)
    margin = float(str(raised.value).split()[1])
    assert 0 < margin < 0.5
    with pytest.raises(AssertionError, match=PROBE_MARK) as tight:
        assert_close(result, case.expected, rtol=1e-9, atol=0.0)
    assert float(str(tight.value).split()[1]) > 1
