"""Torch values through the codec, the reply decoder and the checkers: tensors keep dtype, device, shape and
requires_grad; a detached loss fails where the recording saw a graph; nn.Module state and seeded torch RNG state
cross; float32 and bfloat16 tolerances fit a rewrite in another order.

Skipped where torch is not installed (the host); run with a torch environment:
``PYTHONPATH=src:tests <venv>/bin/python -m pytest --noconftest -o addopts= tests/authoring/test_torch_values.py``.
"""

from __future__ import annotations

import collections
import json

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

from helpers.wire import from_a_case, over_the_wire  # noqa: E402
from lmrbench.runtime import lmrbench_values as lv  # noqa: E402
from lmrbench.runtime.lmrbench_checkers import assert_close  # noqa: E402
from lmrbench.runtime.lmrbench_precision import rounding_scale  # noqa: E402
from lmrbench.runtime.lmrbench_reply import ModuleRecord  # noqa: E402

F = torch.nn.functional


@pytest.mark.parametrize("back", [over_the_wire, from_a_case], ids=["reply", "case"])
def test_tensors_keep_dtype_device_shape_and_requires_grad(back):
    x = torch.randn(3, 2, dtype=torch.bfloat16).requires_grad_(True)
    y = torch.arange(6, dtype=torch.int64).reshape(2, 3)
    p = torch.nn.Parameter(torch.ones(2, dtype=torch.float16))
    got = back({"x": x, "y": y, "p": p, "dtype": torch.float32, "device": torch.device("cpu")})
    assert got["x"].dtype == torch.bfloat16 and got["x"].requires_grad and got["x"].shape == (3, 2)
    assert torch.equal(got["x"].detach(), x.detach()) and got["x"].device.type == "cpu"
    assert got["y"].dtype == torch.int64 and not got["y"].requires_grad and torch.equal(got["y"], y)
    assert isinstance(got["p"], torch.nn.Parameter) and got["p"].dtype == torch.float16
    assert got["dtype"] is torch.float32 and got["device"] == torch.device("cpu")


def dpo(pc, pr, rc, rr, beta):
    return -F.logsigmoid(beta * ((pc - pr) - (rc - rr)))


def dpo_rewards_first(pc, pr, rc, rr, beta):
    chosen, rejected = beta * pc - beta * rc, beta * pr - beta * rr
    return F.softplus(-(chosen - rejected))


def batch(seed, magnitude, grad=True):
    g = torch.Generator().manual_seed(seed)
    base_c, base_r = (-magnitude + magnitude * 0.05 * torch.randn(16, generator=g) for _ in range(2))
    values = [base_c + 2 * torch.randn(16, generator=g), base_r + 2 * torch.randn(16, generator=g),
              base_c + 2 * torch.randn(16, generator=g), base_r + 2 * torch.randn(16, generator=g)]
    return [v.float().requires_grad_(grad and k == 0) for k, v in enumerate(values)]


def test_a_detached_loss_fails_where_the_recording_saw_a_graph():
    args = batch(0, 200)
    expected = over_the_wire(dpo(*args, 0.1))
    assert expected.requires_grad
    assert_close(over_the_wire(dpo_rewards_first(*args, 0.1)), expected, scale=rounding_scale(args))
    with pytest.raises(AssertionError, match="requires_grad=False, expected True"):
        assert_close(over_the_wire(dpo(*args, 0.1).detach()), expected, scale=rounding_scale(args))
    with torch.no_grad():
        no_graph = dpo(*args, 0.1)
    with pytest.raises(AssertionError, match="requires_grad=False"):
        assert_close(over_the_wire(no_graph), expected)


@pytest.mark.parametrize(("magnitude", "beta"), [(200, 0.1), (1000, 0.5), (1000, 0.1)])
def test_a_float32_torch_rewrite_passes_and_wrong_answers_fail(magnitude, beta):
    for seed in range(30):
        args = batch(seed, magnitude, grad=False)
        scale = rounding_scale(args)
        expected = dpo(*args, beta)
        assert_close(dpo_rewards_first(*args, beta), expected, scale=scale)
        with pytest.raises(AssertionError):
            assert_close(dpo(*args, beta) * 1.01, expected, scale=scale)
        with pytest.raises(AssertionError):
            assert_close(-F.logsigmoid(beta * (args[0] - args[1])), expected, scale=scale)


def test_bfloat16_results_get_bfloat16_tolerances():
    x = torch.randn(64, 32, generator=torch.Generator().manual_seed(1))
    w = torch.randn(32, 8, generator=torch.Generator().manual_seed(2))
    expected = (x.bfloat16() @ w.bfloat16())
    reordered = (x.bfloat16().float() @ w.bfloat16().float()).bfloat16()  # accumulated in float32
    assert_close(reordered, expected, scale=rounding_scale([x.bfloat16(), w.bfloat16()]))
    with pytest.raises(AssertionError, match="for bfloat16"):
        assert_close(expected * 1.05, expected)


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(4, 2)
        self.norm = torch.nn.LayerNorm(2)
        self.register_buffer("steps", torch.zeros((), dtype=torch.int64))
        self.scale = 0.5


def test_module_state_crosses_as_a_state_dict_and_compares():
    torch.manual_seed(0)
    head = Head()
    rebuilt = from_a_case(head)  # a case file: the module itself, rebuilt without __init__
    assert type(rebuilt) is Head and rebuilt.scale == 0.5 and isinstance(rebuilt.proj, torch.nn.Linear)
    assert torch.equal(rebuilt.proj.weight, head.proj.weight) and rebuilt.proj.weight.requires_grad
    assert torch.equal(rebuilt.norm(rebuilt.proj(torch.ones(1, 4))), head.norm(head.proj(torch.ones(1, 4))))
    record = over_the_wire(head)  # a reply: only the state, never the class
    assert type(record) is ModuleRecord and list(record.state) == list(head.state_dict())
    assert_close(record, head)
    changed = Head()
    with torch.no_grad():
        changed.load_state_dict(head.state_dict())
        changed.proj.bias += 0.01
    with pytest.raises(AssertionError, match=r"result.proj.bias: 2 of 2 values differ"):
        assert_close(over_the_wire(changed), head)
    head.eval()
    with pytest.raises(AssertionError, match="training=True, expected False"):
        assert_close(record, head)


def test_seeded_torch_random_state_crosses_and_resumes():
    torch.manual_seed(7)
    torch.rand(3)
    state = lv.get_random_state()
    sent = over_the_wire(state)
    expected = torch.rand(4)
    lv.set_random_state(sent)
    assert torch.equal(torch.rand(4), expected)
    assert lv.same_random_state(lv.get_random_state(), lv.get_random_state())


COPY_BACK = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import torch, lmrbench_values, lmrbench_reply, lmrbench_identity

def make():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))

mine, theirs = make(), make()
with torch.no_grad():
    theirs[0].weight.mul_(2)
    theirs[1].running_mean += 1
theirs.eval()
enc = lmrbench_values.Encoder("r")
node = json.loads(json.dumps(enc.encode(theirs, "model")))
lmrbench_identity.merge(mine, lmrbench_reply.decode_reply(node, enc.arrays))  # a module the worker made
same = all(torch.equal(a, b) for a, b in zip(mine.state_dict().values(), theirs.state_dict().values()))
print(json.dumps({"same": same, "training": mine.training, "kept": type(mine[0]).__name__}))
"""


def test_a_module_argument_changed_in_place_gets_the_new_state_on_the_trusted_side():
    import subprocess
    import sys

    from lmrbench.runtime import RUNTIME_DIR

    out = subprocess.run([sys.executable, "-c", COPY_BACK, str(RUNTIME_DIR)], capture_output=True, text=True,
                         check=True)
    assert json.loads(out.stdout) == {"same": True, "training": False, "kept": "Linear"}


SHARED_CHILD = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import torch, lmrbench_values, lmrbench_reply, lmrbench_identity

class Sin(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.freq = torch.nn.Parameter(torch.ones(1, 3))

    def forward(self, x):
        return torch.sin(self.freq * x)

def make():  # Hyena's implicit filter: one activation module registered after each linear layer
    torch.manual_seed(0)
    act = Sin()
    return torch.nn.Sequential(torch.nn.Linear(2, 3), act, torch.nn.Linear(3, 3), act)

mine, theirs = make(), make()
with torch.no_grad():
    theirs[1].freq.mul_(3)
enc = lmrbench_values.Encoder("r", lmrbench_identity.Identities(lmrbench_identity.WORKER))  # a split run's reply
node = json.loads(json.dumps(enc.encode(theirs, "self")))
record = lmrbench_reply.decode_reply(node, enc.arrays)
lmrbench_identity.merge(mine, record)
print(json.dumps({"second": node["children"]["3"]["$"], "names": list(record.state),
                  "same": all(torch.equal(a, b) for a, b in zip(mine.state_dict().values(),
                                                                theirs.state_dict().values())),
                  "shared": mine[1] is mine[3]}))
"""


def test_a_module_registered_twice_in_a_split_reply_is_read_back():
    import subprocess
    import sys

    from lmrbench.runtime import RUNTIME_DIR

    out = subprocess.run([sys.executable, "-c", SHARED_CHILD, str(RUNTIME_DIR)], capture_output=True, text=True,
                         check=True)
    assert json.loads(out.stdout) == {"second": "ref", "names": ["0.weight", "0.bias", "1.freq", "2.weight",
                                                                 "2.bias", "3.freq"], "same": True, "shared": True}


TORCH_CORPUS = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import torch, lmrbench_values, lmrbench_reply
model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
value = {"t": torch.ones(2, dtype=torch.bfloat16, requires_grad=True), "p": torch.nn.Parameter(torch.zeros(1)),
         "dtype": torch.float16, "device": torch.device("cpu"), "model": model, "rng": torch.get_rng_state()}
enc = lmrbench_values.Encoder("r")
node = json.loads(json.dumps(enc.encode(value, "v")))
before = set(sys.modules)
back = lmrbench_reply.decode_reply(node, enc.arrays)
print(json.dumps({"new": sorted(set(sys.modules) - before), "kinds": sorted(type(v).__name__ for v in back.values())}))
"""


def test_decoding_torch_replies_imports_nothing():
    import subprocess
    import sys

    from lmrbench.runtime import RUNTIME_DIR

    out = subprocess.run([sys.executable, "-c", TORCH_CORPUS, str(RUNTIME_DIR)], capture_output=True, text=True,
                         check=True)
    got = json.loads(out.stdout)
    assert got == {"new": [], "kinds": ["ModuleRecord", "Parameter", "Tensor", "Tensor", "device", "dtype"]}


SELF_AFTER = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import torch, lmrbench_values, lmrbench_reply
sys.modules["lmrbench_codec"] = lmrbench_values
import lmrbench_proxy

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.body = torch.nn.Linear(3, 3)
        self.head = torch.nn.Linear(3, 1)
        self.steps = 0

    def forward(self, x):
        return self.head(self.body(x))

    def step(self):  # what a candidate's method does to its instance in the worker
        with torch.no_grad():
            self.head.weight.zero_()
        self.steps += 1

trusted, worker = Net(), Net()
worker.step()
enc = lmrbench_values.Encoder("r")
after = {k: enc.encode(v, k) for k, v in vars(worker).items()}
state = {"args": [], "kwargs": {}, "self": after, "dropped": [], "detached": []}
reply = json.loads(json.dumps({"result": None, "state": state}))
head = trusted.head
lmrbench_proxy._Call("method", trusted, (), {}).finish(reply, enc.arrays)
print(json.dumps({"same_head": trusted.head is head, "zeroed": bool((trusted.head.weight == 0).all()),
                  "steps": trusted.steps, "forward": list(trusted(torch.ones(1, 3)).shape)}))
"""


def test_a_method_of_a_module_leaves_its_state_on_the_trusted_instance():
    import subprocess
    import sys

    from lmrbench.runtime import RUNTIME_DIR

    out = subprocess.run([sys.executable, "-c", SELF_AFTER, str(RUNTIME_DIR)], capture_output=True, text=True,
                         check=True)
    assert json.loads(out.stdout) == {"same_head": True, "zeroed": True, "steps": 1, "forward": [1, 1]}


def test_descriptions_name_grad_and_modules():
    enc = lv.Encoder()
    node = enc.encode((torch.ones(2, requires_grad=True), torch.nn.Linear(2, 1)), "v")
    assert lv.describe(node, enc.arrays) == "tuple(tensor float32[2] (requires_grad), Linear module)"


def test_a_module_read_back_from_a_case_file_matches_whatever_order_its_names_came_back_in():
    """A case file's JSON is written with sorted keys: ``bias`` comes back before ``weight``. The state is the
    same, name by name; a name that is missing is still a difference."""
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU(), torch.nn.Linear(2, 1))
    enc = lv.Encoder()
    rebuilt = lv.Decoder(enc.arrays).decode(json.loads(json.dumps(enc.encode(net, "v"), sort_keys=True)))
    assert list(rebuilt.state_dict()) != list(net.state_dict())  # the order did change
    assert_close(rebuilt, net)
    del rebuilt[2]._parameters["bias"]
    with pytest.raises(AssertionError, match="state_dict keys"):
        assert_close(rebuilt, net)


@pytest.mark.parametrize("back", [over_the_wire, from_a_case], ids=["reply", "case"])
def test_an_optimiser_crosses_with_its_state_keyed_by_its_parameters_and_their_grads(back):
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(3)), torch.nn.Parameter(torch.randn(2))]
    opt = torch.optim.SGD(params, lr=0.1, momentum=0.9)
    for p in params:
        p.grad = torch.ones_like(p)
    opt.step()  # the state now holds a momentum buffer per parameter
    for p in params:
        p.grad = torch.full_like(p, 0.5)
    attrs = dict(vars(opt))
    got = back(attrs)
    keys = list(got["state"])
    assert isinstance(got["state"], collections.defaultdict) and len(keys) == 2
    assert keys[0] is got["param_groups"][0]["params"][0] or back is over_the_wire  # one object, as in torch
    assert torch.equal(got["param_groups"][0]["params"][0].grad, params[0].grad)
    assert_close(got["state"], opt.state)
    if back is from_a_case:  # a recorded optimiser steps as the original does
        again = torch.optim.SGD.__new__(torch.optim.SGD)
        again.__dict__.update(got)
        again.step()
        opt.step()
        assert_close(again.param_groups[0]["params"], opt.param_groups[0]["params"])
