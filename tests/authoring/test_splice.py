"""Golden unmasking, candidate splicing and function extraction."""

from __future__ import annotations

import ast

import pytest

from lmrbench.authoring.task.mask import MaskStyle, mask_source
from lmrbench.core.source.splice import extract_function, replace_functions, splice_bodies
from lmrbench.errors import LmrError

GOLDEN = (
    "import numpy as np\r\n"
    "\r\n"
    "\r\n"
    "class DPOLoss:\r\n"
    "\tbeta = 0.1\r\n"
    "\r\n"
    "\t@staticmethod\r\n"
    "\tdef forward(pi: np.ndarray, ref: np.ndarray) -> np.ndarray:  # ∑ over pairs\r\n"
    '\t\t"""The DPO loss."""\r\n'
    "\t\t# logits of the preference\r\n"
    "\t\tz = DPOLoss.beta * (pi - ref)\r\n"
    "\t\treturn np.log1p(np.exp(-z))\r\n"
    "\t\t# return -z\r\n"
    "\r\n"
    "\r\n"
    "def helper(x): return x  # one line\r\n"
)


def test_mask_then_splice_golden_gives_back_the_original_bytes():
    for style in MaskStyle:
        masked = mask_source(GOLDEN, ["DPOLoss.forward", "helper"], style)
        assert masked != GOLDEN
        assert "log1p" not in masked and "return -z" not in masked
        assert splice_bodies(masked, GOLDEN, ["DPOLoss.forward", "helper"]) == GOLDEN


def test_splice_takes_only_the_named_bodies():
    masked = mask_source(GOLDEN, ["DPOLoss.forward", "helper"])
    out = splice_bodies(masked, GOLDEN, ["helper"])
    assert "def helper(x): return x  # one line" in out
    assert "log1p" not in out


CANDIDATE = '''import os

os.system("rm -rf /")  # never taken


class DPOLoss:
    def forward(pi, ref):
        return -(pi - ref)

    def extra(self):
        return 1


def forward(pi, ref):
    return 0
'''


def test_replace_functions_takes_only_the_named_def_from_the_right_class():
    masked = mask_source(GOLDEN, ["DPOLoss.forward"])
    out = replace_functions(masked, CANDIDATE, ["DPOLoss.forward"], file="loss.py")
    assert "os.system" not in out and "extra" not in out and "return 0" not in out
    assert "\t@staticmethod\r\n" not in out  # the candidate's decorators replace the target's
    ast.parse(out)
    cls = ast.parse(out).body[1]
    method = cls.body[1]
    assert ast.unparse(method) == "def forward(pi, ref):\n    return -(pi - ref)"
    # everything before and after the def is the target's
    assert out.startswith("import numpy as np\r\n\r\n\r\nclass DPOLoss:\r\n\tbeta = 0.1\r\n\r\n")
    assert out.endswith("\r\n\r\n\r\ndef helper(x): return x  # one line\r\n")


def test_replace_functions_accepts_async_and_keeps_comments_above_the_def():
    target = "# the step\nasync def step(x):\n    raise NotImplementedError\n"
    donor = "# model comment\nasync def step(x):\n    return x + 1\n"
    assert replace_functions(target, donor, ["step"]) == "# the step\nasync def step(x):\n    return x + 1\n"


def test_replace_functions_missing_function_in_donor_is_named():
    with pytest.raises(LmrError) as err:
        replace_functions(GOLDEN, "def forward(a, b):\n    return a\n", ["DPOLoss.forward"],
                          file="loss.py", donor_file="candidate.py")
    assert str(err.value).startswith("candidate.py: no function 'DPOLoss.forward'")


def test_replace_functions_donor_syntax_error_gives_its_line():
    with pytest.raises(LmrError) as err:
        replace_functions(GOLDEN, "x = 1\n\ndef forward(:\n", ["DPOLoss.forward"], donor_file="candidate.py")
    assert str(err.value).startswith("candidate.py: syntax error at line 3:")


def test_extract_function_returns_the_def_dedented():
    assert extract_function(GOLDEN, "DPOLoss.forward") == (
        "@staticmethod\r\n"
        "def forward(pi: np.ndarray, ref: np.ndarray) -> np.ndarray:  # ∑ over pairs\r\n"
        '\t"""The DPO loss."""\r\n'
        "\t# logits of the preference\r\n"
        "\tz = DPOLoss.beta * (pi - ref)\r\n"
        "\treturn np.log1p(np.exp(-z))\r\n"
        "\t# return -z\r\n"
    )
    assert extract_function(GOLDEN, "helper") == "def helper(x): return x  # one line\r\n"


def test_splice_mismatched_definition_counts_is_an_error():
    two = "import sys\nif sys.platform:\n    def f():\n        return 1\n"
    two += "else:\n    def f():\n        return 2\n"
    one = "def f():\n    return 3\n"
    masked = mask_source(two, ["f"])
    assert masked.count("raise NotImplementedError") == 2
    assert splice_bodies(masked, two, ["f"]) == two
    with pytest.raises(LmrError, match="defined 2 time"):
        splice_bodies(masked, one, ["f"], file="t.py")


def test_byte_order_mark_and_old_mac_line_endings_survive():
    for src in ("\ufeffdef f():\n    return 1\n", "def f():\r    return 1\rdef g():\r    return 2\r"):
        masked = mask_source(src, ["f"], MaskStyle.RAISE)
        assert masked == src.replace("return 1", "raise NotImplementedError")
        assert splice_bodies(masked, src, ["f"]) == src
