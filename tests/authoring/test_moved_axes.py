"""A setting used as an axis, with state sized along that axis: the driver passes one layout only, and varying
the axis alone gives an input no caller passes (state of the wrong length for the new axis), which the golden code
refuses. The search tries the other axis with the arrays' axes moved to match, the same data as a caller using the
other axis passes it: an answer that never moves the axis into place (``np.moveaxis`` left out) then fails, and
correct answers that broadcast or transpose instead pass."""

from __future__ import annotations

from helpers.record_fixture import graded_both_ways
from lmrbench.schemas.testrun import TestStatus

GAIN_HEAD = '''import numpy as np


class ChannelGain:
    """A learned gain per channel: ``self.gain`` (C,), the channels along axis ``self.dim`` of the input."""

    def __init__(self, channels, dim=1):
        self.gain = np.linspace(0.5, 1.5, channels)
        self.dim = dim

    def apply(self, x):
        """``x`` scaled by ``self.gain`` along axis ``self.dim`` (x.shape[dim] == C, else ValueError); the
        result has x's shape."""
'''
GAIN_GOLDEN = GAIN_HEAD + '''        x = np.asarray(x, dtype=np.float64)
        if x.shape[self.dim] != self.gain.size:
            raise ValueError(f"{x.shape[self.dim]} channels for {self.gain.size} gains")
        moved = np.moveaxis(x, self.dim, -1) * self.gain
        return np.moveaxis(moved, -1, self.dim)
'''
GAIN_DRIVER = '''import numpy as np

from layers.gain import ChannelGain

rng = np.random.default_rng(0)
layer = ChannelGain(4)
for _ in range(3):
    print(layer.apply(rng.normal(size=(5, 4))).sum())
'''
GAIN_UNMOVED = GAIN_HEAD + '''        x = np.asarray(x, dtype=np.float64)
        if x.shape[self.dim] != self.gain.size:
            raise ValueError(f"{x.shape[self.dim]} channels for {self.gain.size} gains")
        return x * self.gain
'''
GAIN_BROADCAST = GAIN_HEAD + '''        x = np.asarray(x, dtype=float)
        if x.shape[self.dim] != len(self.gain):
            raise ValueError("channel count and gains differ")
        shape = [1] * x.ndim
        shape[self.dim] = -1
        return x * self.gain.reshape(shape)
'''
GAIN_SWAPPED = GAIN_HEAD + '''        x = np.asarray(x, dtype=np.float64)
        if x.shape[self.dim] != self.gain.size:
            raise ValueError("channel count and gains differ")
        return np.swapaxes(np.swapaxes(x, self.dim, -1) * self.gain, -1, self.dim)
'''
TASKS = {
    "gain": ("layers/gain.py::ChannelGain.apply",
             {"layers/__init__.py": "", "layers/gain.py": GAIN_GOLDEN, "run.py": GAIN_DRIVER}, "layers/gain.py"),
}
CANDIDATES = [
    ("gain", "the gain broadcast along the last axis, the axis never moved", GAIN_UNMOVED, TestStatus.FAILED),
    ("gain", "the gain reshaped to broadcast along dim", GAIN_BROADCAST, TestStatus.PASSED),
    ("gain", "axes swapped rather than moved", GAIN_SWAPPED, TestStatus.PASSED),
]

recorded, test_an_axis_tried_with_the_arrays_moved_tells_right_from_wrong = graded_both_ways(TASKS, CANDIDATES)
