"""Masking, checked with before/after source strings."""

from __future__ import annotations

import ast

import pytest

from lmrbench.authoring.task.mask import MaskStyle, mask_source
from lmrbench.errors import LmrError


def test_keeps_decorators_signature_docstring_and_everything_outside_the_body():
    before = (
        "import functools\n"
        "# about f\n"
        "\n"
        "@functools.lru_cache(maxsize=None)\n"
        "def f(x: int,\n"
        "      y: int = 2) -> int:  # signature comment\n"
        '    """Add.\n'
        "\n"
        '    More."""\n'
        "    # the trick\n"
        "    z = x + y\n"
        "    return z\n"
        "    # return x - y\n"
        "\n"
        "\n"
        "def g():\n"
        "    return 1\n"
    )
    after = (
        "import functools\n"
        "# about f\n"
        "\n"
        "@functools.lru_cache(maxsize=None)\n"
        "def f(x: int,\n"
        "      y: int = 2) -> int:  # signature comment\n"
        '    """Add.\n'
        "\n"
        '    More."""\n'
        "    # TODO: Implement this function\n"
        "    raise NotImplementedError\n"
        "\n"
        "\n"
        "def g():\n"
        "    return 1\n"
    )
    assert mask_source(before, ["f"], file="m.py") == after


@pytest.mark.parametrize(
    ("style", "body"),
    [
        (MaskStyle.TODO_RAISE, "    # TODO: Implement this function\n    raise NotImplementedError\n"),
        (MaskStyle.RAISE, "    raise NotImplementedError\n"),
        (MaskStyle.PASS, "    pass\n"),
    ],
)
def test_styles_without_docstring(style, body):
    assert mask_source("def f(a):\n    return a * 2\n", ["f"], style) == "def f(a):\n" + body


def test_style_accepts_its_string_value():
    assert mask_source("def f(a):\n    return a\n", ["f"], "pass") == "def f(a):\n    pass\n"


def test_crlf_tabs_and_unicode_are_kept_and_inserted_lines_follow_them():
    before = (
        "# données ✓\r\nclass Modèle:\r\n\tdef f(self):\r\n\t\treturn 'é'\r\n"
        "\r\n\tdef g(self):\r\n\t\treturn 1\r\n"
    )
    after = (
        "# données ✓\r\nclass Modèle:\r\n\tdef f(self):\r\n"
        "\t\t# TODO: Implement this function\r\n\t\traise NotImplementedError\r\n"
        "\r\n\tdef g(self):\r\n\t\treturn 1\r\n"
    )
    assert mask_source(before, ["Modèle.f"]) == after


def test_one_line_defs_stay_on_one_line_and_stay_valid():
    before = 'def f(x): return x  # id\ndef g(x): """Doc."""; return x\nclass A:\n    def m(self): pass\n'
    after = (
        "def f(x): raise NotImplementedError  # TODO: Implement this function\n"
        'def g(x): """Doc."""; raise NotImplementedError  # TODO: Implement this function\n'
        "class A:\n    def m(self): raise NotImplementedError  # TODO: Implement this function\n"
    )
    out = mask_source(before, ["f", "g", "A.m"])
    assert out == after
    ast.parse(out)
    assert mask_source("def f(x): return x\n", ["f"], MaskStyle.PASS) == "def f(x): pass\n"


def test_docstring_sharing_its_line_with_code_keeps_only_the_docstring():
    before = 'def f(x):\n    """Doc."""; y = x  # secret\n    return y\n'
    after = 'def f(x):\n    """Doc."""\n    # TODO: Implement this function\n    raise NotImplementedError\n'
    assert mask_source(before, ["f"]) == after


def test_several_functions_methods_nested_and_async_in_one_call():
    before = (
        "class A:\n"
        "    class B:\n"
        "        def m(self):\n"
        "            return 1\n"
        "\n"
        "async def outer():\n"
        "    async def inner():\n"
        "        return 2\n"
        "    return await inner()\n"
    )
    after = (
        "class A:\n"
        "    class B:\n"
        "        def m(self):\n"
        "            raise NotImplementedError\n"
        "\n"
        "async def outer():\n"
        "    async def inner():\n"
        "        raise NotImplementedError\n"
        "    return await inner()\n"
    )
    assert mask_source(before, ["A.B.m", "outer.inner"], MaskStyle.RAISE) == after


def test_property_getter_by_default_and_setter_by_its_own_name():
    before = (
        "class A:\n"
        "    @property\n"
        "    def p(self):\n"
        "        return self._p\n"
        "\n"
        "    @p.setter\n"
        "    def p(self, value):\n"
        "        self._p = value\n"
    )
    getter = mask_source(before, ["A.p"], MaskStyle.PASS)
    assert getter == before.replace("        return self._p\n", "        pass\n")
    setter = mask_source(before, ["A.p.setter"], MaskStyle.PASS)
    assert setter == before.replace("        self._p = value\n", "        pass\n")


def test_overload_stubs_are_left_alone_and_the_implementation_is_masked():
    before = (
        "from typing import overload\n"
        "@overload\n"
        "def f(x: int) -> int: ...\n"
        "@overload\n"
        "def f(x: str) -> str: ...\n"
        "def f(x):\n"
        "    return x\n"
    )
    after = before.replace("    return x\n", "    raise NotImplementedError\n")
    assert mask_source(before, ["f"], MaskStyle.RAISE) == after


def test_functions_inside_blocks_and_a_file_without_final_newline():
    before = "import sys\nif sys.version_info > (3,):\n    def f():\n        return 3\nelse:\n    pass"
    after = "import sys\nif sys.version_info > (3,):\n    def f():\n        pass\nelse:\n    pass"
    assert mask_source(before, ["f"], MaskStyle.PASS) == after


def test_unknown_name_suggests_the_closest_names():
    src = "class Loss:\n    def forward(self):\n        return 0\n"
    with pytest.raises(LmrError) as err:
        mask_source(src, ["forward"], file="pkg/loss.py")
    assert str(err.value) == "pkg/loss.py: no function 'forward'; did you mean 'Loss.forward'?"
    with pytest.raises(LmrError, match="did you mean 'Loss.forward'"):
        mask_source(src, ["Loss.forwad"], file="pkg/loss.py")


def test_overload_stubs_without_implementation_are_an_error():
    src = "from typing import overload\n@overload\ndef f(x: int) -> int: ...\n"
    with pytest.raises(LmrError, match="only typing.overload stubs"):
        mask_source(src, ["f"], file="s.py")


def test_syntax_error_names_file_and_line():
    with pytest.raises(LmrError) as err:
        mask_source("x = 1\ndef f(:\n    pass\n", ["f"], file="bad.py")
    assert str(err.value).startswith("bad.py: syntax error at line 2:")
    assert "\n" not in str(err.value)


def test_comments_after_the_last_statement_indented_like_the_body_are_masked_and_restored():
    from lmrbench.core.source.splice import splice_bodies

    before = "def f(x):\n    return x\n# section\n    # return -x\n\nz = 1\n"
    after = "def f(x):\n    raise NotImplementedError\n\nz = 1\n"
    assert mask_source(before, ["f"], MaskStyle.RAISE) == after
    assert splice_bodies(after, before, ["f"]) == before
    at_end = "def f(x): return x\n\n    # return -x"
    masked = mask_source(at_end, ["f"], MaskStyle.RAISE)
    assert masked == "def f(x): raise NotImplementedError\n\n    # return -x"
    assert splice_bodies(masked, at_end, ["f"]) == at_end
