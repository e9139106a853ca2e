"""The value codec: what is saved comes back equal and of the same type, and what cannot be saved is named."""

from __future__ import annotations

import collections
import dataclasses
import enum
import io
import math
from pathlib import PurePosixPath
from typing import NamedTuple

import numpy as np
import pytest

from lmrbench.runtime.lmrbench_values import (
    Case,
    Decoder,
    Encoder,
    UnencodableValue,
    describe,
    digest,
    load_case,
    read_case_file,
    write_case,
)


class Point(NamedTuple):
    x: float
    y: float


@dataclasses.dataclass(frozen=True)
class Config:
    beta: float
    names: list[str]
    weights: np.ndarray


class Mode(enum.Enum):
    FAST = 1
    SLOW = 2


def roundtrip(value):
    enc = Encoder()
    node = enc.encode(value, "value")
    data = write_case({"format": "lmrbench-case", "node": node}, enc.arrays)
    case, arrays = read_case_file(io.BytesIO(data))
    return Decoder(arrays).decode(case["node"])


def same(a, b) -> bool:
    """Equal values of exactly the same types, all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return (
            a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        )
    if isinstance(a, np.generic):
        return a.dtype == b.dtype and (a == b or (np.isnan(a) and np.isnan(b)))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if dataclasses.is_dataclass(a):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return a == b


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -(2**70),
        1.5,
        float("nan"),
        float("inf"),
        -float("inf"),
        1 + 2j,
        "naïve ✓",
        b"\x00\xff",
        [1, [2.0, "x"]],
        (1, (2,)),
        {"a": 1, 2: "b", (3, 4): None},
        collections.OrderedDict(b=1, a=2),
        {1, 2, 3},
        frozenset({"x"}),
        slice(1, None, 2),
        PurePosixPath("a/b.txt"),
        Point(1.0, 2.0),
        Mode.SLOW,
        Config(0.1, ["a"], np.arange(3.0)),
        np.arange(6, dtype=np.float32).reshape(2, 3),
        np.array([1, -2], dtype=np.int8),
        np.array(3.5),
        np.array([True, False]),
        np.array(["ab", "c"]),
        np.array([np.nan, 1.0]),
        np.zeros((0, 4)),
        np.array([(1, 2.0)], dtype=[("a", "i4"), ("b", "f8")]),
        np.float32(0.25),
        np.int64(7),
        np.bool_(True),
        np.dtype("float16"),
    ],
    ids=repr,
)
def test_values_come_back_equal_and_of_the_same_type(value):
    assert same(roundtrip(value), value)


def test_numpy_generators_resume_where_they_were():
    rng = np.random.default_rng(3)
    rng.normal(size=5)
    copy = roundtrip(rng)
    assert np.array_equal(copy.normal(size=4), rng.normal(size=4))
    legacy = np.random.RandomState(5)
    assert np.array_equal(roundtrip(legacy).rand(3), legacy.rand(3))


def test_arrays_are_copied_when_encoded():
    a = np.zeros(3)
    enc = Encoder()
    node = enc.encode(a, "a")
    a[0] = 9.0
    assert Decoder(enc.arrays).decode(node)[0] == 0.0


@pytest.mark.parametrize(
    ("value", "where", "type_name"),
    [
        ({"batch": [1, object()]}, r"value\['batch'\]\[1\]", "object"),
        (np.array([1, "a", None], dtype=object), "value", "numpy array of dtype object"),
        (collections.defaultdict(lambda: 0), "value", "collections.defaultdict"),
        (Point(1.0, lambda: 0), "value.y", "function"),
    ],
)
def test_what_cannot_be_saved_is_named_with_its_type(value, where, type_name):
    with pytest.raises(
        UnencodableValue, match=rf"^`{where}` is a {type_name}, which cannot be saved faithfully"
    ):
        Encoder().encode(value, "value")


def test_digest_tells_calls_apart_by_values_dtypes_and_shapes():
    def d(value):
        enc = Encoder()
        return digest(enc.encode(value, "v"), enc.arrays)

    assert d([np.arange(3.0), 1]) == d([np.arange(3.0), 1])
    assert d(np.arange(3.0)) != d(np.arange(3.0) + 1e-12)
    assert d(np.arange(4.0)) != d(np.arange(4.0).reshape(2, 2))
    assert d(np.arange(3.0)) != d(np.arange(3.0, dtype=np.float32))
    assert d({"a": 1}) != d({"a": 1.0})


def _case(arguments, expected=None, **more):
    enc = Encoder()
    args = [{"name": n, "kind": k, "value": enc.encode(v, n)} for n, k, v in arguments]
    case = {
        "format": "lmrbench-case",
        "version": 1,
        "target": "m.py::f",
        "binding": "function",
        "arguments": args,
        "self": None,
        "expected": enc.encode(expected, "result"),
        "changed": {},
        "self_after": None,
        "random_state": None,
        **more,
    }
    return case, enc.arrays


def test_a_case_rebuilds_positional_and_keyword_arguments_from_the_signature(tmp_path):
    case, arrays = _case(
        [
            ("a", "positional_only", 1),
            ("b", "positional_or_keyword", np.ones(2)),
            ("rest", "var_positional", (3, 4)),
            ("k", "keyword_only", "x"),
            ("extra", "var_keyword", {"z": 5}),
        ],
        expected=(1.0, [2]),
    )
    path = tmp_path / "case_1.npz"
    path.write_bytes(write_case(case, arrays))
    loaded = load_case(path)
    assert loaded.args[0] == 1 and np.array_equal(loaded.args[1], np.ones(2)) and loaded.args[2:] == [3, 4]
    assert loaded.kwargs == {"k": "x", "z": 5}
    assert loaded.expected == (1.0, [2])
    assert np.array_equal(loaded.argument("b"), np.ones(2))


def test_without_star_args_every_named_parameter_is_passed_by_keyword():
    case, arrays = _case([("x", "positional_or_keyword", 2), ("rest", "var_positional", ())])
    loaded = Case(case, arrays)
    assert loaded.args == [] and loaded.kwargs == {"x": 2}


def test_case_files_never_unpickle(tmp_path):
    path = tmp_path / "evil.npz"
    np.savez(
        path,
        __case__=np.frombuffer(b'{"format": "lmrbench-case"}', dtype=np.uint8),
        a0=np.array([{"x": 1}], dtype=object),
    )
    with pytest.raises(ValueError, match="pickle"):
        read_case_file(path)


def test_an_instance_is_rebuilt_from_its_attributes_without_calling_init():
    class Model:
        def __init__(self):
            raise AssertionError("not called")

    enc = Encoder()
    case, arrays = _case([], self=enc.encode({"w": np.ones(2), "n": 3}, "self"))
    arrays.update(enc.arrays)
    model = Case(case, arrays).instance(Model)
    assert type(model) is Model and model.n == 3 and np.array_equal(model.w, np.ones(2))


def test_descriptions_are_short_and_say_shapes():
    enc = Encoder()
    node = enc.encode((np.zeros((4, 2), dtype=np.float32), 0.1, "x" * 100, {"k": 1}), "v")
    assert describe(node, enc.arrays) == "tuple(float32[4, 2], 0.1, str of 100 chars, ...)"


def test_torch_tensors_keep_dtype_and_grad_flag():
    torch = pytest.importorskip("torch")
    t = torch.arange(4, dtype=torch.bfloat16).requires_grad_(True)
    back = roundtrip([t, torch.float16, torch.nn.Parameter(torch.ones(2))])
    assert back[0].dtype == torch.bfloat16 and back[0].requires_grad and torch.equal(back[0], t)
    assert back[1] is torch.float16 and isinstance(back[2], torch.nn.Parameter)


def test_pandas_frames_keep_columns_index_and_dtypes():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", None]}, index=pd.Index(["r1", "r2"], name="row"))
    pd.testing.assert_frame_equal(roundtrip(frame), frame)
    series = pd.Series([1.5, 2.5], index=[10, 20], name="s")
    pd.testing.assert_series_equal(roundtrip(series), series)


def test_runtime_modules_need_only_the_standard_library_and_numpy():
    import subprocess
    import sys

    from lmrbench.runtime import RUNTIME_DIR

    probe = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "import lmrbench_values, lmrbench_checkers, lmrbench_record; "
        "bad = sorted(m for m in ('lmrbench', 'pydantic', 'pandas', 'torch') if m in sys.modules); print(bad)"
    )
    argv = [sys.executable, "-c", probe, str(RUNTIME_DIR)]
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_each_place_the_codec_ships_to_gets_it_whole_and_no_two_copies_share_a_part(tmp_path):
    """A task's ``unit_test/`` gets ``lmrbench_values`` and its encoder; a split run's harness folders get the same
    pair as ``lmrbench_codec`` and ``lmrbench_codec_encoder``. Each imports its own encoder, even with the task's
    folder first on the path (where pytest puts it), so a harness never runs a part of a task's older copy."""
    import subprocess
    import sys

    from lmrbench.runtime import TEST_RUNTIME, runtime_files, trusted_split_files, worker_files

    folders = {"unit_test": runtime_files(TEST_RUNTIME), "trusted": trusted_split_files(), "worker": worker_files()}
    for folder, files in folders.items():
        (tmp_path / folder).mkdir()
        for name, data in files.items():
            (tmp_path / folder / name).write_bytes(data)
    probe = (
        "import sys; sys.path[:0] = sys.argv[1:]\n"
        "import numpy as np, lmrbench_codec\n"
        "enc = lmrbench_codec.Encoder('r'); node = enc.encode({'a': (1, np.arange(3.0))}, 'v')\n"
        "if len(sys.argv) > 2:\n"
        "    import lmrbench_values\n"
        "    print(lmrbench_values.Encoder.__module__, lmrbench_values.Decoder(enc.arrays).decode(node))\n"
        "print(lmrbench_codec.Encoder.__module__, lmrbench_codec.Decoder(enc.arrays).decode(node))\n"
    )
    for path in ([tmp_path / "worker"], [tmp_path / "unit_test", tmp_path / "trusted"]):
        argv = [sys.executable, "-c", probe, *map(str, path)]
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.splitlines()
        assert out[-1] == "lmrbench_codec_encoder {'a': (1, array([0., 1., 2.]))}"
    assert out[0] == "lmrbench_values_encoder {'a': (1, array([0., 1., 2.]))}"
