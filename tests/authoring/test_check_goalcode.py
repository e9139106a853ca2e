"""tasks check on the shapes the official set taught: a logged failure is no swallowed one, a block or a helper
the golden code calls is no leak, and the golden code's own defects are named (F117, L206, T310, T313, T314).
The planted-defect benchmark holds other spellings of the same shapes."""

from __future__ import annotations

from pathlib import Path

from helpers.defect_set import GOLDEN, REPO, write_task
from helpers.tasks import Impl
from helpers.tasks import write_task as write_task_folder
from lmrbench.authoring.check.check import find_leaks, task_findings
from lmrbench.authoring.check.findings import Selection
from lmrbench.authoring.task.mask import mask_source
from lmrbench.core.taskset import load_task

HEAD = "import numpy as np\n\nfrom decoding import greedy_decode\n\n\ndef lm(tokens):\n    return np.ones(4)\n\n\n"


def _line(text: str, needle: str) -> int:
    return next(k for k, ln in enumerate(text.splitlines(), start=1) if needle in ln)


def _codes(task: Path, *select: str) -> list[tuple[str, int]]:
    return sorted((f.code, f.line) for f in task_findings(load_task(task), Selection(list(select))))


def test_an_except_that_logs_a_failure_reports_it_and_one_that_prints_the_error_swallows_it(tmp_path: Path) -> None:
    logged = HEAD + '''import logging

logger = logging.getLogger(__name__)


def test_logged():
    try:
        assert greedy_decode(lm, [0], 2, 3)[0].tolist() == [0, 0]
    except Exception as exc:
        logger.error("comparison failed: %s", exc)
'''
    assert _codes(write_task(tmp_path, "1-logged", test=logged), "T308") == []
    swallowed = logged.replace('logger.error("comparison failed: %s", exc)', "print(exc)")
    assert _codes(write_task(tmp_path, "2-swallowed", test=swallowed), "T308") == [("T308", _line(logged, "try:"))]


def test_a_device_name_set_to_cuda_is_a_gpu_need(tmp_path: Path) -> None:
    test = HEAD + '''import torch


class TestOnDevice:
    def setup_method(self):
        self.dev = "cuda:0"

    def test_on_device(self):
        x = torch.ones(4).to(self.dev)
        assert greedy_decode(lambda t: x.cpu().numpy(), [0], 2, 3) is not None
'''
    assert _codes(write_task(tmp_path, "1-dev", test=test), "T310") == [("T310", _line(test, ".to(self.dev)"))]


def test_the_golden_codes_unseeded_draws_and_gpu_need_are_named(tmp_path: Path) -> None:
    shuffled = GOLDEN.replace("    tokens = list(prompt)\n", "    tokens = list(prompt)\n    random.shuffle(tokens)\n")
    shuffled = "import random\n" + shuffled
    task = write_task(tmp_path, "1-shuffle", golden=shuffled)
    (code, line), = _codes(task, "T313")
    assert code == "T313" and "random.shuffle" in (task / "golden_files" / "decoding_golden.py").read_text() \
        .splitlines()[line - 1]
    seeded = write_task(tmp_path, "2-seeded", golden=shuffled, test="import random\n\nrandom.seed(7)\n" + HEAD
                        + "def test_it():\n    assert greedy_decode(lm, [0], 2, 3) is not None\n")
    assert _codes(seeded, "T313") == []
    on_gpu = GOLDEN.replace("    scores = []\n", "    scores = []\n    mark = torch.zeros(1, device='cuda')\n")
    assert [c for c, _ in _codes(write_task(tmp_path, "3-gpu", golden="import torch\n" + on_gpu), "T314")] \
        == ["T314"]


def test_a_goal_function_defined_in_its_test_file_is_named_at_its_definition(tmp_path: Path) -> None:
    # the official 03, 06 and 20: the goal function lives in the test file, so its tests run in the candidate's process
    test = "import numpy as np\n\n\n" + GOLDEN.split("\n\n\n", 1)[1] + "\n\ndef test_it():\n    assert True\n"
    task = write_task(tmp_path, "1-inside", test=test, impl={"goal_file": "unit_test/unit_test_1.py"})
    (code, line), = _codes(task, "F117")
    assert code == "F117"
    assert (task / REPO / "unit_test" / "unit_test_1.py").read_text().splitlines()[line - 1] \
        .startswith("def greedy_decode(")


def test_a_golden_body_kept_in_comments_of_the_masked_file_is_a_leak(tmp_path: Path) -> None:
    task = write_task(tmp_path, "1-comments")
    body = GOLDEN.split("def greedy_decode(", 1)[1].split("\n\n\n", 1)[0]
    goal = task / REPO / "decoding.py"
    goal.write_text(goal.read_text() + "\n##def greedy_decode(" + "".join(
        f"\n#{ln}" for ln in body.splitlines()) + "\n")
    (f,) = task_findings(load_task(task), Selection(["L206"]))
    assert f.path == f"{REPO}/decoding.py" and "comments on lines" in f.message
    assert find_leaks(load_task(task), load_task(task).info.implementations[0]) == ["decoding.py"]


OPTIMISER = '''import numpy as np


class Opt:
    def __init__(self, params, lr=0.1, beta=0.9):
        self.params, self.lr, self.beta, self.state = params, lr, beta, {}

    def warmup(self):
        for group in self.groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = np.zeros((1,), dtype=np.float64) if self.defaults["capturable"] else np.array(0.0)
                    state["avg"] = np.zeros_like(p, dtype=np.float64)
                    state["sq"] = np.zeros_like(p, dtype=np.float64)
                if "sq" not in state.keys():
                    state["sq"] = np.zeros_like(p, dtype=np.float64)
                state["sq"] *= beta2

    def step(self, closure=None):
        loss = None
        for group in self.groups:
            params, grads, avgs, sqs, steps = [], [], [], [], []
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                params.append(p)
                grads.append(p.grad)
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = np.zeros((1,), dtype=np.float64) if self.defaults["capturable"] else np.array(0.0)
                    state["avg"] = np.zeros_like(p, dtype=np.float64)
                    state["sq"] = np.zeros_like(p, dtype=np.float64)
                if "sq" not in state.keys():
                    state["sq"] = np.zeros_like(p, dtype=np.float64)
                avgs.append(state["avg"])
                sqs.append(state["sq"])
                steps.append(state["step"])
            apply_update(params, grads, avgs, sqs, steps, beta1=beta1, beta2=beta2, lr=group["lr"],
                         eps=group["eps"], weight_decay=group["weight_decay"], maximize=group["maximize"])
        return loss


def apply_update(params, grads, avgs, sqs, steps, *, beta1, beta2, lr, eps, weight_decay, maximize):
    _single_update(params, grads, avgs, sqs, steps, beta1=beta1, beta2=beta2, lr=lr, eps=eps,
                   weight_decay=weight_decay, maximize=maximize)


def _single_update(params, grads, avgs, sqs, steps, *, beta1, beta2, lr, eps, weight_decay, maximize):
    for p, g, a, s, t in zip(params, grads, avgs, sqs, steps):
        t += 1
        a *= beta1
        a += (1 - beta1) * g
        s += (1 - beta2) * g * g
        p -= lr * a / (np.sqrt(s) + eps)
'''


def test_a_shared_block_and_a_helper_the_golden_code_calls_are_no_leak(tmp_path: Path) -> None:
    """``warmup`` repeats the state initialisation of ``step`` (0.72 of its fingerprints, 7 of its 16
    statements) and ``apply_update``, which ``step`` calls, its keyword call: neither is a copy of ``step``."""
    task = write_task_folder(
        tmp_path, "1-Opt", repo="opt", goal_file="opt.py", goal=mask_source(OPTIMISER, ["Opt.step"]),
        golden=OPTIMISER, files={"unit_test/unit_test_1.py": "from opt import Opt\n\n\ndef test_step():\n"
                                 "    assert Opt([1.0]).step([0.5]) is not None\n"},
        impls=[Impl("step", "unit_test/unit_test_1.py", class_name="Opt")])
    loaded = load_task(task)
    assert _codes(task, "L2") == [] and find_leaks(loaded, loaded.info.implementations[0]) == []


def test_f116_follows_nested_paths_and_leaves_code_folders_and_handed_over_inputs_alone(tmp_path: Path) -> None:
    test = '''import os
import sys
from pathlib import Path

import numpy as np

sys.path.append(os.path.join(os.path.dirname(__file__), "..", "tools"))
from decoding import greedy_decode  # noqa: E402
from loader import load_prompt  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "recorded")


def test_cases():
    prompt = load_prompt("inputs/prompt.txt")
    want = np.load(REPO / "recorded" / "impl_1" / f"case_{0}.npy")
    extra = np.load(os.path.join(CASES, "impl_1", "extra.npy"))
    assert greedy_decode(lambda t: np.ones(4), prompt, 2, 3)[0].tolist() == want.tolist() + extra.tolist()
'''
    task = write_task(tmp_path, "1-nested", test=test)
    repo = task / REPO
    for rel in ("tools/loader.py", "tools/words.txt", "inputs/prompt.txt"):
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text("def load_prompt(path):\n    return [0]\n" if rel.endswith(".py") else "0\n")
    (repo / "recorded" / "impl_1").mkdir(parents=True)
    for name in ("case_0.npy", "extra.npy"):
        (repo / "recorded" / "impl_1" / name).write_bytes(b"\x93NUMPY")
    (f,) = task_findings(load_task(task), Selection(["F116"]))
    assert "(recorded/impl_1/case_0.npy, recorded/impl_1/extra.npy)" in f.message
    assert "list it in implementation 1's trusted_files" in f.message
