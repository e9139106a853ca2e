"""An optimiser whose state is a ``collections.defaultdict`` (as every torch optimiser's is), written in numpy:
``task new``, ``task record`` of its ``step`` method and ``validate`` grade it split, golden passing, and say which
wrong steps its three recorded steps cannot tell apart."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from typer.testing import CliRunner

from lmrbench.cli.main import app

OPTIM = '''
    """A numpy Lion optimiser (the sign of an interpolated momentum), shaped like torch.optim.Optimizer."""

    from collections import defaultdict

    import numpy as np


    class Lion:
        def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
            self.defaults = {"lr": lr, "betas": betas, "weight_decay": weight_decay}
            self.param_groups = [{"params": list(params), **self.defaults}]
            self.state = defaultdict(dict)

        def step(self, grads):
            """Update every parameter in place from its gradient (``grads`` in the parameters' order)."""
            k = 0
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                for p in group["params"]:
                    state = self.state[k]
                    if "exp_avg" not in state:
                        state["exp_avg"] = np.zeros_like(p)
                    exp_avg = state["exp_avg"]
                    p *= 1 - group["lr"] * group["weight_decay"]
                    update = exp_avg * beta1 + grads[k] * (1 - beta1)
                    p -= group["lr"] * np.sign(update)
                    exp_avg *= beta2
                    exp_avg += grads[k] * (1 - beta2)
                    k += 1
'''
TRAIN = '''
    import numpy as np

    from lion.optim import Lion

    rng = np.random.default_rng(0)
    w = [rng.normal(size=4), rng.normal(size=(2, 3))]
    opt = Lion(w, lr=0.05, betas=(0.9, 0.99), weight_decay=0.1)
    for step in range(3):
        opt.step([2 * p + rng.normal(size=p.shape) for p in w])
'''


def test_a_numpy_optimiser_with_defaultdict_state_records_and_validates_split(tmp_path: Path) -> None:
    src = tmp_path / "lion-src"
    for rel, text in {"lion/__init__.py": "", "lion/optim.py": OPTIM, "train.py": TRAIN,
                      "requirements.txt": "numpy\n"}.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(textwrap.dedent(text).lstrip())
    runner = CliRunner()
    bench = tmp_path / "bench"
    made = runner.invoke(app, ["task", "new", "--repo", str(src), "--function", "lion/optim.py::Lion.step",
                               "--instruction", "Implement Lion's step.", str(bench), "--name", "1-Lion",
                               "--category", "Training Objectives & Optimization"])
    assert made.exit_code == 0, made.output
    recorded = runner.invoke(app, ["task", "record", str(bench / "1-Lion"), "--impl", "1", "--command",
                                   "python train.py", "--sandbox", "local"])
    assert recorded.exit_code == 0, recorded.output
    assert "(changes self)" in recorded.output and "cannot be saved" not in recorded.output

    checked = runner.invoke(app, ["validate", str(bench), "--sandbox", "local", "--repeat", "1",
                                  "--max-mutants", "4"])
    result = json.loads((bench / ".lmrbench/validate/1-Lion/impl-1.json").read_text())
    assert result["isolation"] == "split" and result["valid"] and result["golden_passes"] == 1
    # three steps from a zero momentum: the sign is the gradient's, so a mistake in the momentum's weight (1 - beta1)
    # passes every case; validate says so (valid but weak, exit 1) with what the recording's search tried
    assert checked.exit_code == 1, checked.output
    assert 0 < result["mutants_killed"] < result["mutants_total"]
    assert any(r.startswith("M2 drop_offset: line 25: drop 'beta1' from '(1 - beta1)' passes")
               and "the recording's search found no such input among" in r for r in result["weak_reasons"])
    assert "golden pass rate: 1/1 that ran (100.0%); 0 not run" in checked.output
