"""A value as the trusted side gets it back: from a worker's reply, or from a recorded case."""

from __future__ import annotations

import json
from typing import Any

from lmrbench.runtime import lmrbench_values as lv
from lmrbench.runtime.lmrbench_reply import decode_reply


def over_the_wire(value: Any) -> Any:
    """What the trusted side gets for ``value`` sent by the worker: JSON through text, decoded by allow-list."""
    enc = lv.Encoder("r")
    node = json.loads(json.dumps(enc.encode(value, "the result")))
    return decode_reply(node, enc.arrays)


def from_a_case(value: Any) -> Any:
    """``value`` saved in a case and read back (the trusted decoder, which imports named types)."""
    enc = lv.Encoder()
    node = enc.encode(value, "v")
    return lv.Decoder(enc.arrays).decode(json.loads(json.dumps(node)))
