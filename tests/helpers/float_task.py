"""A float32 DPO-style task the tolerance and codec tests write themselves: its goal returns a namedtuple of its
own module, its cases are recorded at log-probs near -1000 with beta 0.5 (where the old fixed rtol of 1e-5 failed
correct rewrites), and its test file is the one ``task record`` generates."""

from __future__ import annotations

import numpy as np

from helpers.tasks import Impl, write_task
from lmrbench.authoring.record.testgen import CaseSpec, GoalImport, render_recorded_test
from lmrbench.runtime import RUNTIME_DIR, TEST_RUNTIME
from lmrbench.runtime.lmrbench_values import Encoder, write_case
from lmrbench.schemas.task_info import CheckerSettings

HEAD = '''"""A DPO loss in float32."""

from typing import NamedTuple

import numpy as np


class LossOutput(NamedTuple):
    losses: np.ndarray
    chosen_rewards: np.ndarray
    rejected_rewards: np.ndarray


'''
GOLDEN_BODY = '''def dpo_loss(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta):
    """The DPO loss of each pair and the implicit rewards."""
    logits = (policy_chosen - policy_rejected) - (ref_chosen - ref_rejected)
    losses = np.logaddexp(np.float32(0), -beta * logits)
    return LossOutput(losses, beta * (policy_chosen - ref_chosen), beta * (policy_rejected - ref_rejected))
'''
GOLDEN = HEAD + GOLDEN_BODY
MASKED = HEAD + '''def dpo_loss(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta):
    """The DPO loss of each pair and the implicit rewards."""
    raise NotImplementedError
'''
REWRITE = HEAD + '''def dpo_loss(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta):
    """The log-ratios summed in one expression: correct, in another order of operations."""
    logits = beta * (policy_chosen - ref_chosen - policy_rejected + ref_rejected)
    chosen = beta * policy_chosen - beta * ref_chosen
    rejected = beta * policy_rejected - beta * ref_rejected
    return LossOutput(np.logaddexp(np.float32(0), -logits), chosen, rejected)
'''
SCALED = GOLDEN.replace("    return LossOutput(losses,", "    return LossOutput(losses * np.float32(1.01),")
DROPPED = GOLDEN.replace("(policy_chosen - policy_rejected) - (ref_chosen - ref_rejected)",
                         "policy_chosen - policy_rejected")
PARAMS = ("policy_chosen", "policy_rejected", "ref_chosen", "ref_rejected")


def golden_loss(*args: np.ndarray, beta: float) -> tuple[np.ndarray, ...]:
    """The golden function, run here to record what it returns."""
    namespace: dict[str, object] = {}
    exec(compile(GOLDEN, "dpo.py", "exec"), namespace)  # noqa: S102  # the fixture's own source
    return namespace["dpo_loss"](*args, beta)  # type: ignore[operator, no-any-return]


def log_probs(seed: int, magnitude: float, n: int = 16) -> list[np.ndarray]:
    """Policy and reference log-probs near ``-magnitude``, the reference close to the policy (as after SFT)."""
    rng = np.random.default_rng(seed)
    chosen, rejected = (-magnitude + rng.normal(0, magnitude * 0.05, n) for _ in range(2))
    values = [chosen + rng.normal(0, 2, n), rejected + rng.normal(0, 2, n), chosen + rng.normal(0, 2, n),
              rejected + rng.normal(0, 2, n)]
    return [v.astype(np.float32) for v in values]


def case_bytes(args: list[np.ndarray], beta: float) -> bytes:
    """A case file as ``task record`` writes it for ``dpo_loss(*args, beta)``."""
    enc = Encoder()
    arguments = [{"name": n, "kind": "positional_or_keyword", "value": enc.encode(v, n)}
                 for n, v in zip((*PARAMS, "beta"), (*args, beta), strict=True)]
    case = {"format": "lmrbench-case", "version": 1, "target": "dpo.py::dpo_loss", "binding": "function",
            "arguments": arguments, "self": None, "expected": enc.encode(golden_loss(*args, beta=beta), "result"),
            "changed": {}, "self_after": None, "random_state": None}
    return write_case(case, enc.arrays)


def write_float_task(bench, *, checker: CheckerSettings | None = None, cases: int = 3, magnitude: float = 1000.0,
                     beta: float = 0.5, name: str = "5-FloatDPO", dockerfile: bool = False):
    """The task folder ``bench/name`` with ``cases`` recorded calls and the generated test file."""
    checker = checker or CheckerSettings()
    specs, files = [], {}
    for k in range(1, cases + 1):
        files[f"unit_test/data/impl_1/case_{k}.npz"] = case_bytes(log_probs(k, magnitude), beta)
        specs.append(CaseSpec(test=f"test_case_{k}", file=f"case_{k}.npz", qualname="dpo_loss", binding="function",
                              goal=GoalImport("dpo"), positional=False,
                              arguments={n: "float32[16]" for n in PARAMS} | {"beta": repr(beta)},
                              returns="LossOutput(float32[16], float32[16], float32[16])"))
    text = render_recorded_test(1, specs, checker, "python train.py", None)
    task = write_task(bench, name, repo="dporepo", goal_file="dpo.py", goal=MASKED, golden=GOLDEN,
                      impls=[Impl("dpo_loss", "unit_test/unit_test_1.py", "Implement the DPO loss.",
                                  extra={"checker": checker.model_dump()})],
                      files={"unit_test/unit_test_1.py": text, "requirements.txt": "numpy\n"},
                      dockerfile=dockerfile)
    for rel, data in files.items():
        (task / "dporepo" / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / "dporepo" / rel).write_bytes(data)
    for runtime in TEST_RUNTIME:
        (task / "dporepo" / "unit_test" / runtime).write_bytes((RUNTIME_DIR / runtime).read_bytes())
    return task
