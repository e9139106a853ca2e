"""The allow-list decoder of a split run's replies: what research code returns comes back and compares with the
recorded value; nothing the reply names is imported, looked up as a live class, or called."""

from __future__ import annotations

import dataclasses
import enum
import json
import subprocess
import sys
from pathlib import PurePosixPath
from typing import NamedTuple

import numpy as np
import pytest

from lmrbench.runtime import RUNTIME_DIR
from lmrbench.runtime.lmrbench_checkers import assert_close, assert_equal
from lmrbench.runtime.lmrbench_reply import DataRecord, decode_reply
from lmrbench.runtime.lmrbench_values import Encoder, write_case


class Output(NamedTuple):
    loss: np.ndarray
    chosen_rewards: np.ndarray


@dataclasses.dataclass
class Stats:
    mean: float
    counts: dict[str, np.ndarray]


class Mode(enum.Enum):
    FAST = 1


def reply_of(value):
    """The node and arrays a worker sends for ``value``, as the trusted side reads them off the wire."""
    enc = Encoder("r")
    node = json.loads(json.dumps(enc.encode(value, "the result")))
    return node, enc.arrays


def decoded(value):
    return decode_reply(*reply_of(value))


def test_a_namedtuple_of_a_module_the_trusted_side_never_loaded_compares_by_fields():
    out = Output(np.array([0.5, 0.25], dtype=np.float32), np.array([1.0, -1.0], dtype=np.float32))
    node, arrays = reply_of(out)
    node["type"] = "dpo_trainer_not_loaded_here:Output"
    back = decode_reply(node, arrays)
    assert back._fields == ("loss", "chosen_rewards") and type(back).__name__ == "Output"
    assert back.loss.dtype == np.float32 and type(back) is not Output
    assert_close(back, out)
    assert_equal(back, out)
    pair = Output(0.5, 1.0)
    assert decoded(pair) == pair  # a hand-written test's plain == holds too


def test_a_record_with_other_fields_or_values_fails():
    out = Output(np.ones(2, dtype=np.float32), np.zeros(2, dtype=np.float32))
    node, arrays = reply_of(out)
    node["fields"] = ["loss", "rewards"]
    fields = r"result: fields \['loss', 'rewards'\], expected \['loss', 'chosen_rewards'\]"
    with pytest.raises(AssertionError, match=fields):
        assert_close(decode_reply(node, arrays), out)
    wrong = decoded(Output(np.ones(2, dtype=np.float32), np.full(2, 0.5, dtype=np.float32)))
    with pytest.raises(AssertionError, match=r"result.chosen_rewards: 2 of 2 values differ"):
        assert_close(wrong, out)
    with pytest.raises(AssertionError, match="expected a namedtuple"):
        assert_close(decoded((out.loss, out.chosen_rewards)), out)


def test_a_plain_tuple_still_matches_a_namedtuple_result_only_by_closeness():
    """A golden that returns a plain tuple accepts a namedtuple with the same items (callers index it)."""
    plain = (np.ones(2), 1.0)
    assert_close(decoded(Output(np.ones(2), 1.0)), plain)


def test_dataclasses_and_dicts_of_arrays_come_back_as_records_and_compare():
    stats = Stats(0.5, {"a": np.arange(3, dtype=np.float32), "b": np.ones((2, 2))})
    back = decoded(stats)
    assert type(back) is DataRecord and back.mean == 0.5 and back.counts["a"].dtype == np.float32
    assert_close(back, stats)
    assert decoded(Stats(0.5, {})) == Stats(0.5, {}) and decoded(Stats(0.5, {})) != Stats(0.25, {})
    with pytest.raises(AssertionError, match=r"result.counts\['a'\]: 1 of 3 values differ"):
        assert_close(decoded(Stats(0.5, {"a": np.array([0, 1, 3], dtype=np.float32), "b": np.ones((2, 2))})), stats)
    assert_close(decoded({"logits": np.eye(2), "mask": np.array([True, False])}),
                 {"logits": np.eye(2), "mask": np.array([True, False])})


def test_a_training_scripts_args_namespace_is_carried_as_a_record_of_its_attributes():
    """``self.args`` (argparse) and ``types.SimpleNamespace`` configs: recorded, decoded as what they were, and
    compared by attribute, so a method reading ``self.args.alpha`` can be recorded and graded split."""
    import argparse
    import types

    from lmrbench.runtime import lmrbench_reply, lmrbench_values_encoder
    from lmrbench.runtime.lmrbench_values import Decoder

    assert lmrbench_reply.NAMESPACES == lmrbench_values_encoder.NAMESPACES  # the reader and the writer agree
    value = {"args": argparse.Namespace(alpha=4.0, steps=3), "cfg": types.SimpleNamespace(eps=1e-6)}
    node, arrays = reply_of(value)
    assert node["items"][0][1] == {"$": "dataclass", "type": "argparse:Namespace",
                                   "fields": {"alpha": 4.0, "steps": 3}}
    mine = Decoder(arrays).decode(node)
    assert mine == value and type(mine["args"]) is argparse.Namespace  # the test's own side: the real classes
    assert_equal(decoded(value), mine)  # a worker's reply: a record of the same attributes
    with pytest.raises(AssertionError, match=r"alpha: got 5.0, expected 4.0"):
        assert_equal(decoded({**value, "args": argparse.Namespace(alpha=5.0, steps=3)}), mine)


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ({"$": "path", "type": "subprocess:getoutput", "value": "touch /tmp/x"}, "not a pathlib path class"),
        ({"$": "dataclass", "type": "os:system", "fields": {}}, "not a dataclass type"),
        ({"$": "namedtuple", "type": "os:system", "fields": [], "items": []}, "not a namedtuple type"),
        ({"$": "namedtuple", "type": "m:T", "items": [1]}, "must name its fields"),
        ({"$": "namedtuple", "type": "m:T", "fields": ["__class__"], "items": [1]}, "underscore"),
        ({"$": "enum", "type": "os:system", "name": "x"}, "not an Enum class loaded here"),
        ({"$": "np_dtype", "str": "O"}, "not a numpy type string"),
        ({"$": "np_generator", "state": {"$": "dict", "items": [["bit_generator", "RandomState"]]}},
         "not a numpy bit generator"),
        ({"$": "torch_dtype", "name": "__class__"}, "torch is not loaded here|not a torch dtype a reply may name"),
        ({"$": "series", "name": None, "data": {"$": "list", "items": []}, "index": {}},
         "pandas is not loaded|an index must be"),
        ({"$": "pickle", "data": "gASV"}, "not a value kind a reply may hold"),
        ({"$": "set", "items": [[1, 2]]}, "cannot be a set item"),
    ],
)
def test_nodes_off_the_allow_list_are_refused(node, message):
    if node["$"] == "series" and "pandas" not in sys.modules:
        message = "pandas is not loaded"
    with pytest.raises((ValueError, TypeError, KeyError), match=message):
        decode_reply(node, {})


def test_a_uname_result_reply_is_a_plain_record_whose_len_runs_nothing():
    """``platform.uname_result``'s own ``len()`` starts a subprocess: the decoded value is a record instead."""
    import platform

    node = {"$": "namedtuple", "type": "platform:uname_result",
            "fields": ["system", "node", "release", "version", "machine"], "items": ["a", "b", "c", "d", "e"]}
    back = decode_reply(node, {})
    assert type(back) is not platform.uname_result and len(back) == 5 and back.machine == "e"


CORPUS_PROBE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
if sys.argv[3] == "loaded":  # what a trusted side that uses them has loaded
    import pandas, numpy.random
    pandas.DataFrame({"a": [1.0, 2.0], "b": ["x", None]})  # pandas' own lazy imports (pyarrow strings)
import numpy as np
import lmrbench_reply, lmrbench_values
case, arrays = lmrbench_values.read_case_file(sys.argv[2])
before = set(sys.modules)
outcomes = {}
for name, node in case["nodes"].items():
    try:
        value = lmrbench_reply.decode_reply(node, arrays)
        outcomes[name] = "ok " + type(value).__name__
    except (ValueError, TypeError, KeyError) as exc:
        outcomes[name] = "refused " + str(exc)
print(json.dumps({"new": sorted(set(sys.modules) - before), "outcomes": outcomes}))
"""


def corpus() -> dict:
    """One reply node of every kind the Encoder writes, plus forged ones."""
    pd = pytest.importorskip("pandas")
    values = {
        "scalars": [None, True, 3, 1.5, "text"], "nan": float("nan"), "complex": 1 + 2j, "bytes": b"\x00",
        "tuple": (1, (2,)), "set": {1, 2}, "frozenset": frozenset({"a"}), "slice": slice(1, None, 2),
        "dict": {"a": np.ones(2), (1, 2): None}, "ordered": __import__("collections").OrderedDict(a=1),
        "path": PurePosixPath("a/b"), "namedtuple": Output(np.ones(1), np.zeros(1)),
        "dataclass": Stats(1.0, {"x": np.ones(1)}), "ndarray": np.arange(6, dtype=np.float32).reshape(2, 3),
        "npscalar": np.float32(0.5), "np_dtype": np.dtype("float16"),
        "np_struct": np.dtype([("a", "i4"), ("b", "f8", (2,))]), "np_generator": np.random.default_rng(1),
        "np_randomstate": np.random.RandomState(2),
        "dataframe": pd.DataFrame({"a": [1.0, 2.0], "b": ["x", None]}), "series": pd.Series([1, 2], name="s"),
    }
    enc = Encoder("r")
    nodes = {name: enc.encode(v, name) for name, v in values.items()}
    nodes["enum"] = {"$": "enum", "type": "re:RegexFlag", "name": "IGNORECASE"}
    nodes["tensor"] = {"$": "tensor", "key": "r3", "dtype": "float32", "requires_grad": False, "parameter": False}
    nodes["torch_dtype"] = {"$": "torch_dtype", "name": "float32"}
    nodes["torch_device"] = {"$": "torch_device", "name": "cpu"}
    nodes["module"] = {"$": "module", "type": "torch.nn.modules.linear:Linear", "training": True, "attrs": {},
                       "params": {}, "buffers": {}, "children": {}}
    nodes["forged_path"] = {"$": "path", "type": "subprocess:getoutput", "value": "touch /tmp/lmrbench-pwned"}
    nodes["forged_dataclass"] = {"$": "dataclass", "type": "os:system", "fields": {}}
    nodes["unloaded_namedtuple"] = {"$": "namedtuple", "type": "json.tool:Row", "fields": ["a"], "items": [1]}
    nodes["unloaded_dataclass"] = {"$": "dataclass", "type": "http.cookiejar:Cookie", "fields": {"a": 1}}
    nodes["unloaded_enum"] = {"$": "enum", "type": "http:HTTPStatus", "name": "OK"}
    nodes["uname"] = {"$": "namedtuple", "type": "platform:uname_result", "fields": ["system"], "items": ["x"]}
    return {"nodes": nodes, "arrays": enc.arrays}


@pytest.mark.parametrize("preloaded", ["plain", "loaded"])
def test_decoding_every_kind_of_reply_imports_nothing(preloaded, tmp_path):
    data = corpus()
    path = tmp_path / "corpus.npz"
    path.write_bytes(write_case({"format": "lmrbench-case", "nodes": data["nodes"]}, data["arrays"]))
    argv = [sys.executable, "-c", CORPUS_PROBE, str(RUNTIME_DIR), str(path), preloaded]
    out = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
    assert out["new"] == []
    got = out["outcomes"]
    assert got["namedtuple"] == "ok Output" and got["dataclass"] == "ok DataRecord" and got["enum"] == "ok RegexFlag"
    assert got["unloaded_namedtuple"] == "ok Row" and got["unloaded_dataclass"] == "ok DataRecord"
    assert got["uname"] == "ok uname_result"
    for name in ("scalars", "nan", "complex", "bytes", "tuple", "set", "frozenset", "slice", "dict", "ordered",
                 "path", "ndarray", "npscalar", "np_dtype", "np_struct"):
        assert got[name].startswith("ok "), (name, got[name])
    for name in ("tensor", "torch_dtype", "torch_device"):
        assert got[name] == "refused the reply holds a torch value, but torch is not loaded here"
    assert got["module"] == "ok ModuleRecord"  # its state holds no tensor here, so nothing needs torch
    assert got["forged_path"].startswith("refused") and got["forged_dataclass"].startswith("refused")
    assert got["unloaded_enum"].startswith("refused")
    loaded = preloaded == "loaded"
    for name in ("dataframe", "series", "np_generator", "np_randomstate"):
        assert got[name].startswith("ok" if loaded else "refused"), (name, got[name])


def test_a_module_registered_twice_comes_back_under_both_names():
    """``nn.Sequential(lin, act, lin2, act)`` holds ``act`` twice; a split run's message (with identities) sends
    its second place as a ref to the first. The reply is read, each place holding the shared module's tensors as
    ``state_dict`` names them (Hyena's filter: "a module's child must be a module" stopped its golden run)."""
    freq = np.arange(3, dtype=np.float32)

    def module(params, children, **extra):
        return {"$": "module", "type": "m:M", "training": False, "attrs": {}, "params": params, "buffers": {},
                "children": children, **extra}

    act = module({"freq": {"$": "ndarray", "key": "r0"}}, {}, id=0)
    seq = module({}, {"0": module({}, {}), "1": act, "2": module({}, {}), "3": {"$": "ref", "id": 0}})
    record = decode_reply(json.loads(json.dumps(seq)), {"r0": freq})
    assert list(record.state) == ["1.freq", "3.freq"]
    assert record.state["1.freq"] is record.state["3.freq"] and (record.state["3.freq"] == freq).all()
    for forged in ({"$": "ref", "id": 7}, {"$": "ref", "id": 1}, {"$": "tuple", "items": []}):  # unknown; itself
        bad = module({}, {"0": module({}, {"x": forged}, id=1)})
        with pytest.raises(ValueError, match="a module's child must be a module"):
            decode_reply(json.loads(json.dumps(bad)), {})
