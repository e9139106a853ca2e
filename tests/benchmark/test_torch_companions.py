"""What a torch task's layer gets beside torch: numpy (the split run's codec sends tensors as arrays), and numpy<2
for a torch whose wheels were built against NumPy 1 (below 2.3), which cannot reach numpy 2 ("Failed to initialize
NumPy: _ARRAY_API not found"). The resolutions are stand-ins: the wheels each requirement set resolves to."""

from __future__ import annotations

from pathlib import Path

import pytest

from lmrbench.benchmark.sandbox.environments import layers
from lmrbench.benchmark.sandbox.environments.layers import named_companions, plan_layers, resolved_companions
from lmrbench.benchmark.sandbox.environments.wheelhouse import WheelTarget
from lmrbench.errors import EnvironmentUnavailable

IMAGE = WheelTarget(python="3.11.2", glibc="2.36")


def _wheel(name: str, version: str) -> Path:
    return Path(f"/cache/{name}-{version}-cp311-cp311-manylinux1_x86_64.whl")


def _resolver(calls: list[list[str]]):
    """A stand-in for pip: torch at the version a line pins (2.5.1 unpinned), numpy 1.26.4 under numpy<2, else
    2.4.6 where numpy is asked for (torch's own wheels declare no numpy)."""

    def resolve(lines: list[str], target: WheelTarget, **_kw: object) -> list[Path]:
        calls.append(list(lines))
        out = []
        for line in lines:
            if line.startswith("torch"):
                out.append(_wheel("torch", line.partition("==")[2] or "2.5.1"))
        if any(line.startswith("numpy") for line in lines):
            if "numpy>=2" in lines and "numpy<2" in lines:
                raise EnvironmentUnavailable("pip could not resolve: numpy>=2 and numpy<2", cause="requirement")
            out.append(_wheel("numpy", "1.26.4" if "numpy<2" in lines else "2.4.6"))
        return out

    return resolve


@pytest.mark.parametrize(("lines", "numpy"), [
    (["torch==2.0.1"], "1.26.4"),  # numpy absent: numpy<2, not numpy 2
    (["torch==2.0.1", "numpy"], "1.26.4"),  # numpy named unpinned: kept below 2 as well
    (["torch==2.5.1"], "2.4.6"),  # a torch built against NumPy 2 takes the newest
    (["torch"], "2.4.6"),
])
def test_an_old_torch_gets_numpy_below_2_in_its_task_layer(monkeypatch, lines, numpy):
    calls: list[list[str]] = []
    monkeypatch.setattr(layers, "resolve_wheels", _resolver(calls))
    plan = plan_layers(lines, IMAGE)
    assert [p.name.split("-")[1] for p in plan.task if p.name.startswith("numpy-")] == [numpy], calls
    assert plan.added == (["numpy<2"] if numpy.startswith("1.") else ["numpy"] if "numpy" not in lines else [])


def test_numpy_2_asked_for_beside_an_old_torch_names_why_it_cannot_be_had(monkeypatch):
    monkeypatch.setattr(layers, "resolve_wheels", _resolver([]))
    with pytest.raises(EnvironmentUnavailable) as exc:
        plan_layers(["torch==2.0.1", "numpy>=2"], IMAGE)
    assert "torch==2.0.1 was built against NumPy 1 and cannot reach numpy 2" in str(exc.value)
    assert exc.value.cause == "requirement"


def test_companions_by_version_and_by_pin():
    assert resolved_companions({"torch": "2.0.1"}) == ["numpy<2"]
    assert resolved_companions({"torch": "2.2.2+cpu", "numpy": "2.1.0"}) == ["numpy<2"]
    assert resolved_companions({"torch": "2.0.1", "numpy": "1.26.4"}) == []
    assert resolved_companions({"torch": "2.3.0"}) == ["numpy"] and resolved_companions({"scipy": "1.13"}) == []
    # the local runner's venv, made from the lines alone
    assert named_companions(["torch==2.0.1"]) == ["numpy<2"] and named_companions(["torch==2.0.1", "numpy"]) == [
        "numpy<2"]
    assert named_companions(["torch<2.3.0"]) == named_companions(["torch~=2.1.0"]) == ["numpy<2"]
    assert named_companions(["torch==2.0.1", "numpy<2"]) == [] and named_companions(["torch>=2.1"]) == ["numpy"]
    assert named_companions(["torch~=2.1"]) == named_companions(["torch==2.3"]) == ["numpy"]
