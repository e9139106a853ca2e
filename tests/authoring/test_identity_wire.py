"""The objects a split call shares keep their identity across the wire (``runtime/lmrbench_identity.py``): the
worker's changes land in the trusted side's own objects, aliases stay one object, unchanged arrays come back
without their bytes, and a reply cannot claim or reshape an object it was never sent."""

from __future__ import annotations

import collections
import json

import numpy as np
import pytest

from lmrbench.runtime import lmrbench_identity as identity
from lmrbench.runtime.lmrbench_reply import Reader
from lmrbench.runtime.lmrbench_values import Decoder, Encoder, UnencodableValue


def wire(state: dict, arrays: dict) -> tuple[dict, dict]:
    """A message as the other side reads it: JSON through text, arrays copied."""
    return json.loads(json.dumps(state)), {k: np.array(v, copy=True) for k, v in arrays.items()}


def request(args: list, instance=None) -> tuple[identity.Identities, dict, dict]:
    ids = identity.Identities(identity.TRUSTED)
    enc = Encoder("a", ids, callables=True)
    state = identity.encode_state(enc, UnencodableValue, args, {}, instance, strict=True)
    return ids, *wire(state, enc.arrays)


def worker_side(state: dict, arrays: dict) -> tuple[identity.Identities, list]:
    ids = identity.Identities(identity.WORKER)
    dec = Decoder(arrays, ids)
    return ids, [dec.decode(a) for a in state["args"]]


def reply(ids: identity.Identities, args: list) -> tuple[dict, dict]:
    enc = Encoder("r", ids)
    return wire(identity.encode_state(enc, UnencodableValue, args, {}, None), enc.arrays)


def trusted_reads(ids: identity.Identities, state: dict, arrays: dict) -> None:
    identity.apply_state(Reader(arrays, ids).read, state, None, object.__setattr__)


def test_an_optimisers_parameters_and_state_change_in_the_callers_objects():
    params = [np.zeros(3), np.ones((2, 2))]
    groups = [{"params": params[:1], "lr": 0.1}, {"params": params[1:], "lr": 0.2}]
    state: collections.defaultdict = collections.defaultdict(dict)
    ids, sent, arrays = request([groups, state, params])
    wids, (w_groups, w_state, w_params) = worker_side(sent, arrays)
    assert w_groups[0]["params"][0] is w_params[0]  # one object on the worker's side too
    for k, group in enumerate(w_groups):
        for p in group["params"]:
            p -= group["lr"]
            w_state[k]["exp_avg"] = np.full_like(p, k)
    back, back_arrays = reply(wids, [w_groups, w_state, w_params])
    trusted_reads(ids, back, back_arrays)
    assert groups[0]["params"][0] is params[0] and groups[1]["params"][0] is params[1]
    np.testing.assert_array_equal(params[0], [-0.1] * 3)
    np.testing.assert_array_equal(params[1], np.full((2, 2), 0.8))
    assert isinstance(state, collections.defaultdict) and state.default_factory is dict
    np.testing.assert_array_equal(state[1]["exp_avg"], np.ones((2, 2)))


def test_an_array_the_worker_left_alone_comes_back_without_its_bytes():
    kept, moved = np.arange(1000.0), np.zeros(2)
    ids, sent, arrays = request([kept, moved])
    wids, (w_kept, w_moved) = worker_side(sent, arrays)
    w_moved += 1
    back, back_arrays = reply(wids, [w_kept, w_moved])
    assert back["args"][0].get("same") is True and "key" not in back["args"][0]
    assert len(back_arrays) == 1
    trusted_reads(ids, back, back_arrays)
    np.testing.assert_array_equal(moved, [1.0, 1.0])
    np.testing.assert_array_equal(kept, np.arange(1000.0))


def test_one_array_in_two_arguments_is_one_array_for_the_worker():
    v = np.array([4.0])
    ids, sent, arrays = request([v, {"again": v}])
    _, (a, holder) = worker_side(sent, arrays)
    assert holder["again"] is a


@pytest.mark.parametrize(("node", "message"), [
    ({"$": "ndarray", "key": "x", "origin": 2}, "names no object this side sent"),
    ({"$": "list", "items": [], "origin": 0}, "came back as a list"),
    ({"$": "ndarray", "same": True, "origin": 7}, "names no object of this call"),
    ({"$": "ndarray", "key": "y", "origin": 0}, "came back as"),
], ids=["an-object-never-sent", "another-kind", "same-of-nothing", "another-shape"])
def test_a_reply_cannot_claim_or_reshape_an_object_it_was_never_sent(node, message):
    ids, _, _ = request([np.zeros(3)])
    arrays = {"x": np.zeros(3), "y": np.zeros(4)}
    with pytest.raises(ValueError, match=message):
        Reader(arrays, ids).read(node)
