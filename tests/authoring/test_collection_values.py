"""defaultdict, OrderedDict and values met twice through the codec, the reply decoder and the checkers: an
optimiser's state (a defaultdict keyed by parameter) and its param_groups cross a split run."""

from __future__ import annotations

import collections
import json

import pytest

from helpers.wire import from_a_case, over_the_wire
from lmrbench.runtime import lmrbench_values as lv
from lmrbench.runtime.lmrbench_checkers import assert_close
from lmrbench.runtime.lmrbench_reply import decode_reply

np = pytest.importorskip("numpy")


class Slot:
    """A module-level class: a defaultdict may name it as its factory."""


@pytest.mark.parametrize("back", [over_the_wire, from_a_case], ids=["reply", "case"])
def test_an_optimiser_state_keeps_its_factory_keys_and_arrays(back):
    state = collections.defaultdict(dict)
    state[0]["exp_avg"] = np.arange(3.0)
    state[1]["exp_avg"] = np.ones(2, dtype=np.float32)
    groups = [{"params": [np.zeros(3), np.zeros(2)], "lr": 1e-4, "betas": (0.9, 0.99)}]
    got = back({"state": state, "param_groups": groups, "order": collections.OrderedDict(b=1, a=2)})
    assert type(got["state"]) is collections.defaultdict and got["state"].default_factory is dict
    assert list(got["order"]) == ["b", "a"] and type(got["order"]) is collections.OrderedDict
    assert_close(got["state"], state)
    assert_close(got["param_groups"], groups)
    with pytest.raises(AssertionError, match="exp_avg"):
        wrong = collections.defaultdict(dict, {0: {"exp_avg": np.arange(3.0) + 1}, 1: state[1]})
        assert_close(got["state"], wrong)
    assert got["state"][5] == {} and 5 in got["state"]  # the factory still makes a missing entry


@pytest.mark.parametrize("factory", [list, set, int, float])
def test_each_builtin_factory_crosses(factory):
    value = collections.defaultdict(factory)
    value["k"]
    for back in (over_the_wire, from_a_case):
        got = back(value)
        assert got.default_factory is factory and got == value


def test_a_named_class_factory_is_imported_from_a_case_but_never_called_from_a_reply():
    value = collections.defaultdict(Slot)
    assert from_a_case(value).default_factory is Slot
    assert over_the_wire(value).default_factory is None


def test_a_lambda_factory_is_named_with_the_fix():
    with pytest.raises(lv.UnencodableValue) as err:
        lv.Encoder().encode({"state": collections.defaultdict(lambda: 0)}, "self")
    text = str(err.value)
    assert "`self['state']` is a collections.defaultdict" in text and "<lambda>" in text
    assert "dict, list, set, int, float" in text


def test_an_array_met_twice_is_one_object_again_and_unaliased_values_keep_their_form():
    shared = np.arange(4.0)
    value = {"params": [shared], "again": shared}
    enc = lv.Encoder()
    node = enc.encode(value, "v")
    assert node["items"][1][1] == {"$": "ref", "id": 0} and len(enc.arrays) == 1
    for back in (over_the_wire, from_a_case):
        got = back(value)
        assert got["again"] is got["params"][0] and np.array_equal(got["again"], shared)
    plain = lv.Encoder().encode({"a": np.arange(2.0), "b": np.arange(2.0)}, "v")
    assert "id" not in json.dumps(plain)  # digests of values without aliases do not change
    # a second value from the same encoder starts afresh: no ref to an earlier value
    assert enc.encode(shared, "w")["$"] == "ndarray"


@pytest.mark.parametrize("node", [{"$": "ref", "id": 0}, [{"$": "ndarray", "key": "r0", "id": 0},
                                                         {"$": "ndarray", "key": "r0", "id": 0}]])
def test_a_reply_with_a_ref_to_nothing_or_an_id_twice_is_refused(node):
    with pytest.raises(ValueError):
        decode_reply(node, {"r0": np.zeros(2)})
