"""Mutants of a golden function."""

from __future__ import annotations

import ast

import pytest

from lmrbench.authoring.mutants import MAX_MUTANTS, generate_mutants
from lmrbench.errors import LmrError

SOURCE = '''import numpy as np

SCALE = 2  # not part of the function: never mutated (1 + 1)


class DPOLoss:
    def forward(self, pi, ref, beta=0.1):
        """The loss: 1 - 2."""
        z = beta * (pi - ref)
        z -= 1
        best = max(z[0], z[-1], z[1:n])
        if z.sum() > 0:
            return -np.log(z[:, 0])
        return np.log1p(np.exp(-z)).mean() + best


def other(a, b):
    return a + b
'''


def mutant_of(mutants, kind, needle=""):
    return next(mu for mu in mutants if mu.kind == kind and needle in mu.description)


def test_each_kind_changes_the_body_as_described():
    mutants = generate_mutants(SOURCE, "DPOLoss.forward", file="loss.py", limit=100)
    body = SOURCE[SOURCE.index("        z = beta") : SOURCE.index("\n\n\ndef other")]
    assert mutant_of(mutants, "constant_return", "None").source == SOURCE.replace(body, "        return None")
    assert mutant_of(mutants, "constant_return", "zeros_like").source.count("return np.zeros_like(pi)") == 1
    assert mutant_of(mutants, "return_input", "ref").source.count("        return ref\n") == 1
    assert "        z = beta * (pi)\n" in mutant_of(mutants, "drop_term", "drop 'ref'").source
    assert "        z = beta * (ref)\n" in mutant_of(mutants, "drop_term", "drop 'pi'").source
    assert "        z = beta * (pi + ref)\n" in mutant_of(mutants, "flip_sign", "flip + and -").source
    assert "        z += 1\n" in mutant_of(mutants, "flip_sign", "+=").source
    assert "return np.log(z[:, 0])" in mutant_of(mutants, "flip_sign", "drop the minus of '-np.log").source
    assert "z[1], z[-1]" in mutant_of(mutants, "off_by_one", "index 0 becomes 1").source
    assert "z[0], z[0]" in mutant_of(mutants, "off_by_one", "-1 becomes 0").source
    assert "z[2:n]" in mutant_of(mutants, "off_by_one", "lower bound").source
    assert "z[1:n + 1]" in mutant_of(mutants, "off_by_one", "upper bound").source
    assert "best = min(z[0]" in mutant_of(mutants, "swap_min_max").source
    assert "if z.sum() >= 0:" in mutant_of(mutants, "compare").source
    assert "if z.mean() > 0:" in mutant_of(mutants, "swap_reduction", "z.sum()").source
    assert "np.log1p(np.exp(-z)).sum() + best" in mutant_of(mutants, "swap_reduction", ".mean()'").source
    assert mutant_of(mutants, "drop_term").description.startswith("line 9: ")


def test_only_the_function_body_changes_and_every_mutant_parses_and_differs():
    mutants = generate_mutants(SOURCE, "DPOLoss.forward")
    assert len(mutants) == MAX_MUTANTS
    head, tail = SOURCE.split('"""The loss: 1 - 2."""\n')[0], SOURCE.split("\n\n\ndef other")[1]
    sources = [mu.source for mu in mutants]
    assert len(set(sources)) == len(sources)
    for text in sources:
        assert text != SOURCE
        ast.parse(text)
        assert text.startswith(head + '"""The loss: 1 - 2."""\n')
        assert text.endswith("\n\n\ndef other" + tail)


def test_deterministic_and_kinds_take_turns():
    first = generate_mutants(SOURCE, "DPOLoss.forward")
    assert first == generate_mutants(SOURCE, "DPOLoss.forward")
    kinds = [mu.kind for mu in first[:8]]
    assert kinds == ["constant_return", "return_input", "drop_term", "flip_sign", "off_by_one",
                     "swap_min_max", "swap_reduction", "compare"]  # fmt: skip
    assert [mu.kind for mu in generate_mutants(SOURCE, "DPOLoss.forward", limit=3)] == kinds[:3]


def test_one_line_function_and_no_numpy():
    src = "def add(a, b): return a + b\n"
    mutants = generate_mutants(src, "add")
    texts = {mu.source for mu in mutants}
    assert texts == {
        "def add(a, b): return None\n",
        "def add(a, b): return 0\n",
        "def add(a, b): return a\n",
        "def add(a, b): return b\n",
        "def add(a, b): return a - b\n",
        "def add(a, b): return -(a + b)\n",
    }


def test_function_without_anything_to_mutate_still_gets_constant_returns():
    mutants = generate_mutants("def f():\n    '''Doc.'''\n    print('hi')\n", "f")
    assert [mu.source for mu in mutants] == [
        "def f():\n    '''Doc.'''\n    return None\n",
        "def f():\n    '''Doc.'''\n    return 0\n",
    ]


def test_unknown_function_names_the_file():
    with pytest.raises(LmrError, match="^loss.py: no function 'forward'; did you mean 'DPOLoss.forward'"):
        generate_mutants(SOURCE, "forward", file="loss.py")
