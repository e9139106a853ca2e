"""How the search and the scan name an input they tried, in a summary's words (``gamma=0.5``, ``labels=None``,
``int arrays all zero``, ``random inputs of the recorded shapes``). No lmrbench import: this file ships to
sandboxes."""

from __future__ import annotations

from typing import Any

from lmrbench_variations import IGNORED

_ONE_ARRAY = {"shifted": "{} shifted by a large constant", "zeros": "{} all zero (or a row of it)",
              "same": "{} all equal", "distinct": "{} all distinct",
              "close": "{} within a millionth of its first entry",
              "repeated": "{} with every row a near copy (a billionth apart) of the first",
              "flipped": "{} reversed along its last axis", "lone": "{} with one entry unlike the others",
              "scaled": "{} scaled to magnitudes of 60", "one_zero": "{} with its last entry 0",
              "huge": "{} scaled to magnitudes of 1e4",
              "nan": "{} with one entry nan", "inf": "{} with one entry inf", "neginf": "{} with one entry -inf",
              "sparse": "{} with every other entry 0", "mismatch": "{} one item shorter than the others"}
"""What an ``arrays`` variation of one argument (``only``) does, the argument's name in place of ``{}``."""
_ALL_ARRAYS = {"zeros": "int, bool and 0/1 arrays all zero (a row of a float one)", "same": "arrays all equal",
               "distinct": "int arrays all distinct", "close": "float arrays within a millionth of their first entry",
               "repeated": "float matrices with every row a near copy (a billionth apart) of the first",
               "flipped": "int, bool and 0/1 arrays reversed along their last axis (padding moved to the other end)",
               "shifted": "float arrays shifted by a large constant", "ones": "float arrays all one",
               "lone": "int arrays with one entry unlike the others",
               "scaled": "float arrays scaled to magnitudes of 60", "huge": "float arrays scaled to magnitudes of 1e4",
               "one_zero": "positive int vectors with their last entry 0",
               "nan": "float arrays with one entry nan", "inf": "float arrays with one entry inf",
               "neginf": "float arrays with one entry -inf (a banned token)",
               "sparse": "float arrays with every other entry 0",
               "empty": "arrays cut to no item along their first axis (an empty batch)",
               "negated": "float arrays negated", "negative": "int arrays with one entry -1",
               "past": "int arrays with one entry at a length they index"}
"""What an ``arrays`` variation of every array argument does."""


def input_text(spec: dict[str, Any]) -> str:
    """What an input set: ``gamma=0.5``, ``labels=None``, ``int arrays all zero``, ``random inputs``."""
    also = "".join(f", {k}={v!r}" for k, v in spec.get("set", {}).items())
    if "blocks" in spec:
        (path, value), = spec["set"].items()
        return f"{path}={value!r} with {spec['blocks']} cut to {value} block(s) of rows"
    if "random" in spec and "resize" in spec:
        return f"random inputs with {' = '.join(spec['resize'])} = {spec['to']}" + also
    if "resize" in spec:
        return f"{' = '.join(spec['resize'])} = {spec['to']}, the arrays' axes of its length cut to it" + also
    if "grow" in spec:
        return f"{spec['grow']} one axis longer, as the input it describes allows" + also
    if "mix" in spec:
        return f"{spec['mix']} mixing {', '.join(map(str, spec['values'][:4]))} in one call" + also
    if "move" in spec:
        return f"the arrays' axis {spec['move'][0]} moved to {spec['move'][1]}" + also
    if "rank" in spec:
        return f"{spec['rank']} and the arrays of its shape given one more axis" + also
    if "retype" in spec:
        return f"{spec['retype']} given as 0/1 ints" + also
    if spec.get("spaced"):
        return "text arguments with their spaces doubled" + also
    if "names" in spec:
        return f"{spec['names']} given the first key of each dict argument" + also
    if "none_item" in spec:
        return f"{spec['none_item']} with its first {'key left out' if spec.get('drop') else 'item None'}" + also
    if "rename" in spec:
        return f"{spec['rename'][1]} in place of {spec['rename'][0]}" + also
    if "unbatch" in spec:
        return f"one item without its batch axis ({'first' if spec['unbatch'] == 0 else 'last'})" + also
    if "random" in spec:
        return "random inputs of the recorded shapes" + also
    if "soft" in spec:
        return "0/1 float arrays given values between 0 and 1" + also
    if "fill" in spec:
        entries = {"random": "0/1 entries", "ones": "all ones", "zeros": "all zeros"}[spec.get("with", "random")]
        entries = entries.replace("0/1", "True/False").replace("ones", "True").replace("zeros", "False") \
            if spec.get("bool") else entries
        if "ignore" in spec:
            entries += f", int arrays of its shape {IGNORED} where it is {spec['ignore']}"
        shape = {"rows": "one per row of the first array", "square": "square",
                 "leading": "one per vector of the first array"}.get(spec["like"], f"shaped like {spec['like']}")
        return f"{spec['fill']} given ({entries}, {shape}){also}"
    if "edge" in spec:
        sets = ", ".join(f"{k}={v!r}" for k, v in spec["set"].items())
        return f"{sets} (what the other side of {spec['edge']!r} took)"
    if "arrays" in spec and spec.get("only"):
        return _ONE_ARRAY[spec["arrays"]].format(spec["only"]) + also
    if "arrays" in spec:
        return _ALL_ARRAYS[spec["arrays"]] + also
    return ", ".join(f"{k}={v!r}" for k, v in spec.get("set", {}).items())
