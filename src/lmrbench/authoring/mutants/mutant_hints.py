"""What input would kill a mutant, read from its kind and description, and which kinds name a real mistake.

A live mutant of a mistake kind means a plausible wrong answer passes; the hint says what case would tell it
from the golden code (``a case where `step < warmup` does not hold``), so that a note can be acted on.
"""

from __future__ import annotations

from lmrbench.authoring.mutants.mutants import MISTAKE_KINDS

TELLING_KINDS = frozenset((*MISTAKE_KINDS, "compare"))
"""Kinds whose live mutant is a plausible wrong answer: a valid task kills each or shows it equivalent."""


def _between(text: str, left: str, right: str) -> str:
    return text.split(left, 1)[-1].split(right, 1)[0]


def kill_hint(kind: str, description: str) -> str:
    """What case would kill a mutant of ``kind`` (``a case with beta other than 0.1``)."""
    text = description.split(": ", 1)[-1] if description.startswith("line ") else description
    if kind in ("pin_parameter", "pin_nested"):
        param, _, value = text.removeprefix("pin ").partition(" to ")
        return f"a case with {param} other than {value.split(' (')[0]}"
    if kind == "drop_mask":
        return "a case whose masked-out entries hold values that change the result (not zeros)"
    if kind in ("drop_branch", "force_branch"):
        test = _between(text, "`if ", "`")
        never = "always the if" in text or "always taken" in text
        return f"a case where `{test}` does not hold" if never else \
            f"a case where `{test}` holds and changes the result"
    if kind == "default_path":
        name, _, default = _between(text, "default path of ", " ").partition("=")
        return f"a case that passes {name} (not {default})" if "always taken" in text else \
            f"a case that leaves {name} at its default {default}"
    if kind == "drop_guard":
        if "guard" not in text:
            return "a case with values outside the clamp's bounds"
        bound = _between(text, "drop the guard ", " of")
        return f"a case where the guard {bound} binds (a count of zero, a value past the bound)"
    if kind in ("drop_offset", "drop_term"):
        return f"a case where {_between(text, 'drop ', ' from')} is not zero and changes the result"
    if kind == "compare":
        return f"a case where both sides of {_between(text, ' in ', '$')} are equal"
    if kind == "change_axis":
        return "a case whose arrays have different sizes along the axes, with values that differ along them"
    if kind == "drop_update":
        what = _between(text, "update `", "`")
        state = what.split("=", 1)[0].rstrip(" +-*/")
        test = _between(text, "`if ", "`")
        return f"a case where `{test}` {'does not hold' if 'the else of' in text else 'holds'} and the update " \
            f"changes {state} (it starts at another value than the update gives it)"
    if kind == "drop_reduction":
        return "a case whose rows hold several entries that the reduction combines (not one per row)"
    if kind == "drop_copy":
        return ("a case of a call that keeps what it is given (the test then checks that `self` shares no memory "
                "with the caller's arrays where the golden code's did not), or one that writes into the copy")
    if kind == "drop_power":
        base = _between(text, "power in '", " **").lstrip("(")
        return f"a case where {base} holds values other than 0, 1 and -1 (soft values, not a mask or one-hot)"
    if kind == "drop_wrap":
        index = _between(text, "wrap in '", " % ")
        index = index[1:-1] if index.startswith("(") and index.endswith(")") else index
        return f"a case where {index} reaches past the end (it wraps round)"
    if kind == "drop_none_check":
        return f"a case where {_between(text, 'check ', ' is').strip(chr(39))} is None"
    if kind == "strict_get":
        return f"a case whose {_between(text, 'for ', '.get(').strip(chr(39))} lacks the key it reads"
    if kind == "drop_move":
        return "a case whose axis is another than the recorded one, with the arrays' axes moved to match"
    if kind == "rebind":
        return ("a case from a program that holds the array elsewhere too (a model holding the parameters an "
                "optimiser updates): the test then checks the call changes that very array")
    if kind == "sign_zero":
        return f"a case where {_between(text, 'sign(', ')' + chr(39))} has entries that are exactly zero"
    if kind == "arith_swap":
        return f"a case where the right operand in {_between(text, ' in ', '$')} is not 1 or -1"
    if kind == "scale_constant":
        if not text.startswith("scale "):
            return f"a case where the constant {text.split(' becomes ', 1)[0]} changes the result beyond the tolerance"
        return f"a case where {_between(text, 'scale ', ' by 2')} is not zero and changes the result"
    if kind == "negate":
        test = _between(text, " in ", "$") if " in " in text else _between(text, "condition ", "$")
        return f"a case where {test} decides the result"
    if kind == "swap_args":
        return "a case where the two arguments differ and their order changes the result"
    return "a case whose result requires grad" if kind == "detach" else "a case that tells it from the golden code"
