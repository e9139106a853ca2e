"""A failed golden run whose output shows the golden code's answer never reached the test is "not run", with the
cause that stopped it: torch unable to use the numpy beside it (the environment, not the codec), or a reply of the
golden code that the codec cannot read back (the codec, not a wrong golden). Read from the run's output as the
official set's 25-AdaLora (torch 2.0.1 beside numpy 2) and 26-Hyena (a module registered twice) printed it."""

from __future__ import annotations

from helpers.small_task import write_task
from lmrbench.benchmark.validation.not_run import golden_not_run
from lmrbench.core.taskset import load_task
from lmrbench.runtime.lmrbench_protocol import UNCARRIED, UNREADABLE
from lmrbench.schemas.testrun import TestReport, TestStatus

NUMPY_2_LOG = """
A module that was compiled using NumPy 1.x cannot be run in
NumPy 2.4.6 as it may crash. To support both 1.x and 2.x
versions of NumPy, modules must be compiled with NumPy 2.0.
/opt/venv/lib/python3.11/site-packages/torch/random.py:46: UserWarning: Failed to initialize NumPy: _ARRAY_API not \
found (Triggered internally at ../torch/csrc/utils/tensor_numpy.cpp:84.)
TypeError: `argument 0` is a tensor of dtype float32, which cannot be saved faithfully: Numpy is not available: \
this call """ + UNCARRIED + """; the implementation needs "isolation": "shared"
"""

UNREADABLE_LOG = f"""
  File "/work/r1/trusted/harness/lmrbench_proxy.py", line 225, in _remote_call
lmrbench_proxy.CandidateGone: the candidate's reply to HyenaOperator.forward {UNREADABLE}: ValueError: a module's \
child must be a module
"""


def _reports(log: str) -> list[TestReport]:
    failed = TestReport(status=TestStatus.FAILED, sandbox="docker", exit_code=1, log=log, isolation="split")
    return [failed, failed.model_copy()]


def test_torch_that_cannot_use_numpy_is_the_environment_not_the_codec(tmp_path):
    task = load_task(write_task(tmp_path / "bench"))
    got = golden_not_run(task, task.info.implementations[0], _reports(NUMPY_2_LOG))
    assert got is not None and got.cause == "environment", got
    assert got.detail.startswith("torch failed to initialise NumPy: numpy 2.4.6's major version is not the one "
                                 "torch was built against"), got.detail
    assert "pin numpy<2 beside a torch below 2.3" in got.fix and "leave torch unpinned" in got.fix
    assert "codec" not in got.detail
    # the conversion's error alone (no warning kept in the log): numpy may also be missing
    alone = golden_not_run(task, task.info.implementations[0], _reports("RuntimeError: Numpy is not available"))
    assert alone is not None and alone.cause == "environment" and "not installed beside it" in alone.detail


def test_a_reply_the_codec_cannot_read_is_a_codec_cause_naming_the_call_and_the_error(tmp_path):
    task = load_task(write_task(tmp_path / "bench"))
    impl = task.info.implementations[1]
    got = golden_not_run(task, impl, _reports(UNREADABLE_LOG))
    assert got is not None and got.cause == "codec", got
    assert got.detail == ("the golden code's reply to HyenaOperator.forward cannot be read back by the codec "
                          "(ValueError: a module's child must be a module)")
    assert f'"isolation": "shared" in implementations[{impl.index}]' in got.fix
    # a golden that ran and answered wrong is no not-run cause
    assert golden_not_run(task, impl, _reports("AssertionError: 5 != 6")) is None
