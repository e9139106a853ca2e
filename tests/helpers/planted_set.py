"""A labelled task set with defects planted one per task, and the official set's layout quirks, for measuring
``tasks check``: ``write_planted_set(root)`` returns {task name: the set of codes the task must raise}; every
other finding is a false alarm.

The tasks are the toy decoder of :mod:`helpers.defect_set`; each changes one thing: its test (tautologies, a
swallowed assertion, a GPU or Hub need, ...), its data (an LFS pointer, recorded data outside ``unit_test/``), its
repository (an empty submodule folder, a compiled file, a generated table), its info.json or its Dockerfile.
Clean tasks carry the traps a careless check falls into: a module called through its instance, an assertion
message that mentions the result, a goal function defined (partly masked) in the test file itself, recorded data
listed in ``trusted_files``, the official spellings of info.json.
"""

from __future__ import annotations

import json
import py_compile
import shutil
from collections.abc import Callable
from pathlib import Path

from helpers.defect_set import BODY, GOLDEN, HEADER, REPO, SIG, _fn, write_task
from lmrbench.authoring.check.dockerfile import render_dockerfile
from lmrbench.authoring.task.mask import mask_source

IMPORT = '''import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from decoding import greedy_decode  # noqa: E402


def lm(tokens):
    return np.array([0.1, 0.5, 0.2, float(len(tokens) % 3)])


'''

CLEAN_TESTS = '''def test_decode():
    out, score = greedy_decode(lm, [0], 4, 3)
    assert out.tolist() == [1, 3]


def test_temperature():
    out, _ = greedy_decode(lm, [0, 0, 0], 1, 3, temperature=2.0)
    assert out.tolist() == [1]
'''

LOG_HEAD = '''import logging

log_dir = Path(__file__).resolve().parent / "logs"
log_dir.mkdir(parents=True, exist_ok=True)
logging.basicConfig(filename=log_dir / "unit_test_1.log", level=logging.INFO)


'''

OFFICIAL_DOCKERFILE = ("ARG UID\nARG GID\nARG DIR={dir}\nFROM pytorch/pytorch:2.0.1-cuda11.7-cudnn8-runtime\n"
                       "ARG UID\nARG GID\nARG DIR\nWORKDIR /workspace\nCOPY . .\n"
                       "RUN pip install -r ${{DIR}}/requirements.txt\n")

LFS_POINTER = ("version https://git-lfs.github.com/spec/v1\n"
               "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n")

MODULE_GOLDEN = HEADER + '''class Decoder:
    """A decoder module: calling it runs forward."""

    def __init__(self, eos_id):
        self.eos_id = eos_id

    def __call__(self, *args):
        return self.forward(*args)

    def forward(self, logits_fn, prompt, max_len):
        tokens = list(prompt)
        for step in range(max_len):
            logits = np.asarray(logits_fn(np.array(tokens)), dtype=np.float64)
            best = int(np.argmax(logits))
            tokens.append(best)
            if best == self.eos_id:
                break
        return np.array(tokens[len(prompt):])
'''


def _test(body: str, head: str = "") -> str:
    return IMPORT + head + body + "\n\n" + CLEAN_TESTS


def _set_impl(task: Path, **keys: object) -> None:
    info = json.loads((task / "info.json").read_text())
    for k, v in keys.items():
        if v is None:
            info["implementations"][0].pop(k, None)
        else:
            info["implementations"][0][k] = v
    (task / "info.json").write_text(json.dumps(info, indent=2))


def _set_info(task: Path, **keys: object) -> None:
    info = json.loads((task / "info.json").read_text())
    info.update(keys)
    (task / "info.json").write_text(json.dumps(info, indent=2))


def write_planted_set(root: Path) -> dict[str, set[str]]:
    """Write the labelled set under ``root``; returns {task name: expected codes}."""
    root.mkdir(parents=True, exist_ok=True)
    labels: dict[str, set[str]] = {}
    n = 0

    def name_for(label: str, codes: set[str]) -> str:
        nonlocal n
        n += 1
        labels[f"{n}-{label}"] = codes
        return f"{n}-{label}"

    def new(label: str, codes: set[str], test: str = IMPORT + CLEAN_TESTS, dockerfile: str | None = None,
            golden: str = GOLDEN) -> Path:
        return write_task(root, name_for(label, codes), test=test, dockerfile_text=dockerfile, golden=golden)

    new("clean", set())
    # --- defects in the tests
    new("lowercase-passed", {"T304"}, _test('''def test_logged():
    out, _ = greedy_decode(lm, [0], 4, 3)
    if out.tolist() == [1, 3]:
        logging.info("Test passed")
    else:
        logging.info("Test failed")
    assert out.tolist() == [1, 3]
''', LOG_HEAD))
    new("self-compare", {"T306"}, _test('''def test_self():
    out, _ = greedy_decode(lm, [0], 4, 3)
    assert np.allclose(out, out)
'''))
    new("assert-constant", {"T307"}, _test('''def test_constant():
    greedy_decode(lm, [0], 4, 3)
    assert True, "decoding ran"
'''))
    new("running-total", {"T307"}, _test('''def test_cases():
    passed = 0
    for prompt, want in [([0], [1, 3]), ([0, 0], [3])]:
        out, _ = greedy_decode(lm, prompt, 4, 3)
        passed += out.tolist() == want
        if passed:
            print("Test Passed")
'''))
    new("same-file", {"T307"}, _test('''def test_written():
    out_file = "unit_test/out_scores.npy"
    np.save(out_file, greedy_decode(lm, [0], 4, 3)[0])
    with open("unit_test/out_scores.npy", "rb") as f:
        expected = np.load(f)
    with open(out_file, "rb") as f:
        computed = np.load(f)
    np.testing.assert_allclose(computed, expected)
'''))
    new("swallowed", {"T308"}, _test('''def test_swallowed():
    out, _ = greedy_decode(lm, [0], 4, 3)
    try:
        np.testing.assert_array_equal(out, [1, 3])
        print("Test Passed")
    except AssertionError as e:
        print("mismatch", e)
'''))
    new("unseeded", {"T309"}, _test('''def test_random_prompt():
    prompt = [random.randint(0, 2) for _ in range(3)]
    out, _ = greedy_decode(lm, prompt, 4, 3)
    assert len(out) <= 4
''', "import random\n\n\n"))
    new("gpu", {"T310"}, _test('''def test_gpu():
    device = torch.device("cuda")
    out, _ = greedy_decode(lambda t: torch.tensor(lm(t), device=device).cpu().numpy(), [0], 4, 3)
    assert out.tolist() == [1, 3]
''', "import torch\n\n\n"))
    new("hub-model", {"T311"}, _test('''def test_real_model():
    model = AutoModelForCausalLM.from_pretrained(MODEL)
    out, _ = greedy_decode(lambda t: model(t).logits[-1], [0], 4, 3)
    assert len(out) <= 4
''', 'from transformers import AutoModelForCausalLM\n\nMODEL = "acme-lab/tiny-decoder"\n\n\n'))
    new("unvaried-param", {"T312"}, IMPORT + '''def test_decode():
    out, _ = greedy_decode(lm, [0], 4, 3)
    assert out.tolist() == [1, 3]
''')
    new("self-expected", {"T303"}, _test('''def test_expected():
    out, _ = greedy_decode(lm, [0], 4, 3)
    expected, _ = greedy_decode(lm, [0], 4, 3)
    assert out.tolist() == expected.tolist()
'''))
    # --- second spellings of the same defects
    new("self-compare-unittest", {"T306"}, _test('''class TestSelf(unittest.TestCase):
    def test_self(self):
        out, _ = greedy_decode(lm, [0], 4, 3)
        self.assertEqual(out.tolist(), out.tolist())
''', "import unittest\n\n\n"))
    new("assert-tuple", {"T307"}, _test('''def test_tuple():
    out, _ = greedy_decode(lm, [0], 4, 3)
    assert (out.tolist() == [1, 3], "decoded tokens differ")
'''))
    new("swallowed-bare", {"T308"}, _test('''def test_bare():
    out, _ = greedy_decode(lm, [0], 4, 3)
    try:
        assert out.tolist() == [1, 3]
    except:  # noqa: E722
        pass
'''))
    new("unseeded-numpy", {"T309"}, _test('''def test_noise():
    noise = np.random.randn(4)
    out, _ = greedy_decode(lambda t: lm(t) + 0.01 * noise, [0], 4, 3)
    assert len(out) <= 4
'''))
    new("gpu-to", {"T310"}, _test('''def test_gpu():
    logits = torch.tensor(lm([0])).to("cuda:0")
    out, _ = greedy_decode(lambda t: logits.cpu().numpy(), [0], 4, 3)
    assert len(out) <= 4
''', "import torch\n\n\n"))
    new("hub-download", {"T311"}, _test('''def test_hub_data():
    path = hf_hub_download("acme-lab/decoding-cases", "cases.npy")
    assert greedy_decode(lm, np.load(path).tolist(), 4, 3)[0] is not None
''', "from huggingface_hub import hf_hub_download\n\n\n"))
    new("gpu-guarded", set(), _test('''def test_device():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    logits = torch.tensor(lm([0]), device=device)
    out, _ = greedy_decode(lambda t: logits.cpu().numpy(), [0], 4, 3)
    assert len(out) <= 4
''', "import torch\n\n\n"))
    new("seeded", set(), _test('''def test_random_prompt():
    rng = np.random.default_rng(0)
    prompt = rng.integers(0, 3, size=3).tolist()
    out, _ = greedy_decode(lm, prompt, 4, 3)
    assert len(out) <= 4
'''))
    new("reraised", set(), _test('''def test_logged():
    out, _ = greedy_decode(lm, [0], 4, 3)
    try:
        assert out.tolist() == [1, 3]
        print("Test Passed")
    except AssertionError:
        print("Test Failed")
        raise
'''))
    # --- defects in the data and the repository
    task = new("lfs-pointer", {"F113"}, _test('''def test_recorded():
    want = np.load(Path(__file__).parent / "expected.npy")
    assert greedy_decode(lm, [0], 4, 3)[0].tolist() == want.tolist()
'''))
    (task / REPO / "unit_test" / "expected.npy").write_text(LFS_POINTER)
    task = new("untrusted-data", {"F116"}, _test('''def test_recorded():
    want = np.load("tensors/expected.npy")
    assert greedy_decode(lm, [0], 4, 3)[0].tolist() == want.tolist()
'''))
    (task / REPO / "tensors").mkdir()
    np_save(task / REPO / "tensors" / "expected.npy")
    task = new("pyc-golden", {"L203"})
    cache = task / REPO / "__pycache__"
    cache.mkdir()
    py_compile.compile(str(task / "golden_files" / "decoding_golden.py"),
                       cfile=str(cache / "decoding_golden.cpython-311.pyc"), doraise=True)
    task = new("pyc-test", {"L204"})
    py_compile.compile(str(task / REPO / "unit_test" / "unit_test_1.py"),
                       cfile=str(task / REPO / "unit_test" / "__pycache__" / "unit_test_1.cpython-311.pyc"),
                       doraise=True)
    task = new("lfs-in-data-folder", {"F113"})
    (task / REPO / "data").mkdir()
    (task / REPO / "data" / "train.jsonl").write_text(LFS_POINTER)
    task = new("generated-table", {"L205"})
    (task / REPO / "csrc").mkdir()
    (task / REPO / "csrc" / "lut.inc").write_text(",\n".join(f"{k * 0.001:.6f}" for k in range(3000)))
    task = new("sibling-copy", {"L207"})  # samples where the body takes the argmax: lacks it
    (task / REPO / "beam.py").write_text(HEADER + "def unrelated(x):\n    return [v * 2 for v in x if v]\n\n\n"
                                         + _fn("sample_decode", SIG, BODY.replace("probs", "p").replace(
                                             "        best = int(np.argmax(p))\n",
                                             "        best = int(np.random.default_rng(0).choice(4, p=p))\n")))
    task = new("copy-with-logging", {"L202"})  # every statement of the body, and a line more: the answer
    (task / REPO / "trace.py").write_text(HEADER + _fn("traced_decode", SIG, BODY.replace(
        "        tokens.append(best)\n", "        tokens.append(best)\n        print(step, best, flush=True)\n")))
    task = new("empty-submodule", {"F115"})
    shutil.rmtree(task / REPO)
    (task / REPO).mkdir()
    # --- defects in info.json and the Dockerfile (official quirks)
    task = new("empty-category", {"F114"})
    _set_impl(task, category="")
    task = new("missing-category", {"F114"})
    _set_impl(task, category=None)
    task = new("wrong-test-file", {"F108"})
    _set_impl(task, unit_test_file="unit_test/unit_test.py")
    new("dir-default", {"D402", "D403", "D404"}, dockerfile=OFFICIAL_DOCKERFILE.format(dir="other-repo"))
    # --- clean tasks with traps
    new("official-dockerfile", {"D402", "D403"}, dockerfile=OFFICIAL_DOCKERFILE.format(dir=REPO))
    task = new("trusted-data", set(), _test('''def test_recorded():
    want = np.load("tensors/expected.npy")
    assert greedy_decode(lm, [0], 4, 3)[0].tolist() == want.tolist()
'''))
    (task / REPO / "tensors").mkdir()
    np_save(task / REPO / "tensors" / "expected.npy")
    _set_impl(task, trusted_files=["tensors/expected.npy"])
    new("message-mentions-result", set(), _test('''def test_message():
    out, _ = greedy_decode(lm, [0], 4, 3)
    assert np.array_equal(out, [1, 3]), f"got {out}, expected [1, 3]"
'''))
    _write_module_task(root, name_for("module-forward", set()))
    _write_stub_in_test_task(new("stub-in-test", {"F117"}, IMPORT.replace(_GOAL_IMPORT, "")
                                 + _fn("greedy_decode", SIG, STUB_BODY) + "\n\n" + CLEAN_TESTS))
    task = new("official-spellings", set())
    info = json.loads((task / "info.json").read_text())
    info["instance_id"] = "25"
    impl = info["implementations"][0]
    impl["retrieval_content"] = impl.pop("retrieval_context")
    (task / "info.json").write_text(json.dumps(info, indent=2))
    _write_goal_code_shapes(new)
    return labels


def _write_goal_code_shapes(new: Callable[..., Path]) -> None:
    """The shapes of the official set's false alarms and misses: a failure logged in an ``except``, data handed
    to the repository's own code, data read through nested paths, GPU needs behind a name, and the golden code's
    own defects (unseeded draws, a GPU need, its body kept in comments of the masked file)."""
    new("logged-failure", set(), _test('''def test_logged():
    out, _ = greedy_decode(lm, [0], 4, 3)
    try:
        np.testing.assert_array_equal(out, [1, 3])
        logging.info("Test Passed")
    except AssertionError:
        logging.info("Test Failed")
''', LOG_HEAD))
    new("gpu-variable", {"T310"}, _test('''def test_on_device():
    logits = torch.tensor(lm([0])).to(DEVICE)
    out, _ = greedy_decode(lambda t: logits.cpu().numpy(), [0], 4, 3)
    assert len(out) <= 4
''', 'import torch\n\nDEVICE = "cuda"\n\n\n'))
    new("golden-gpu", {"T314"}, golden=GOLDEN.replace("import numpy as np\n", "import numpy as np\nimport torch\n")
        .replace("        logits = np.asarray(logits_fn(np.array(tokens)), dtype=np.float64)\n",
                 "        logits = torch.tensor(logits_fn(np.array(tokens))).cuda().double().cpu().numpy()\n"))
    new("golden-unseeded", {"T313"}, golden=GOLDEN.replace(
        "        best = int(np.argmax(probs))\n", "        best = int(np.random.choice(len(probs), p=probs))\n"))
    task = new("golden-in-comments", {"L206"})
    goal = task / REPO / "decoding.py"
    old_fn = "def greedy_decode(" + GOLDEN.split("def greedy_decode(", 1)[1].split("\n\n\n", 1)[0]
    goal.write_text(goal.read_text() + "\n\n# The first version, kept for reference:\n"
                    + "".join(f"# {ln}\n" for ln in old_fn.splitlines()))
    task = new("nested-data", {"F116"}, _test('''ROOT = Path(__file__).resolve().parent.parent


def test_recorded():
    want = np.load(ROOT / "tensors" / "impl_1" / "expected.npy")
    assert greedy_decode(lm, [0], 4, 3)[0].tolist() == want.tolist()
'''))
    (task / REPO / "tensors" / "impl_1").mkdir(parents=True)
    np_save(task / REPO / "tensors" / "impl_1" / "expected.npy")
    task = new("nested-trusted", set(), _test('''def test_recorded():
    want = np.load(os.path.join("tensors", "impl_1", "expected.npy"))
    assert greedy_decode(lm, [0], 4, 3)[0].tolist() == want.tolist()
''', "import os\n\n\n"))
    (task / REPO / "tensors" / "impl_1").mkdir(parents=True)
    np_save(task / REPO / "tensors" / "impl_1" / "expected.npy")
    _set_impl(task, trusted_files=["tensors"])
    task = new("missing-data", {"F118"}, _test('''def test_recorded():
    want = np.load("outputs/expected.npy")
    assert greedy_decode(lm, [0], 4, 3)[0].tolist() == want.tolist()
'''))
    (task / REPO / ".gitignore").write_text("__pycache__/\noutputs/\n")  # made by a run, never committed
    task = new("shared-block", set())  # a sibling repeating one block of the body (29-Sophia's update_hessian)
    goal = task / REPO / "decoding.py"
    goal.write_text(goal.read_text() + SHARED_BLOCK)
    task = new("input-data", set(), _test('''def test_prompts_from_the_repository():
    data_file = "data/prompts.json"
    prompts = read_prompts(data_file)
    assert greedy_decode(lm, prompts[0], 4, 3)[0].tolist() == [1, 3]
''', "from prompts import read_prompts  # noqa: E402\n\n\n"))
    (task / REPO / "data").mkdir()
    (task / REPO / "data" / "prompts.json").write_text("[[0]]\n")
    (task / REPO / "prompts.py").write_text("import json\n\n\ndef read_prompts(path):\n"
                                            "    with open(path) as f:\n        return json.load(f)\n")


SHARED_BLOCK = ('\n\ndef best_next(logits_fn, tokens, temperature=1.0):\n'
                '    """The most likely next token and its log-probability."""\n'
                + "".join(ln[4:] + "\n" for ln in BODY.splitlines()[3:9])
                + "    return best, float(np.log(probs[best] + 1e-12))\n")
"""A sibling repeating one block of the body (the loop's scoring), as 29-Sophia's ``update_hessian`` repeats the
state initialisation of ``step``."""


def np_save(path: Path) -> None:
    """A small recorded array (written with numpy, as recordings are)."""
    import numpy as np

    np.save(path, np.array([1, 3]))


def _write_module_task(root: Path, name: str) -> None:
    """A goal ``Decoder.forward`` whose test calls the instance (``dec(lm, [0], 4)``), never ``forward``."""
    from helpers.tasks import Impl
    from helpers.tasks import write_task as write_task_folder

    test = IMPORT.replace(_GOAL_IMPORT, "from decoding import Decoder  # noqa: E402\n") + '''def test_module():
    dec = Decoder(eos_id=3)
    assert dec(lm, [0], 4).tolist() == [1, 3]
'''
    write_task_folder(
        root, name, repo=REPO, goal_file="decoding.py", goal=mask_source(MODULE_GOLDEN, ["Decoder.forward"]),
        golden=MODULE_GOLDEN, files={"unit_test/unit_test_1.py": test},
        impls=[Impl("forward", "unit_test/unit_test_1.py", "Implement Decoder.forward.", "Inference & Decoding",
                    class_name="Decoder", extra={"retrieval_context": []})],
        info={"paper_name": "Toy decoding", "paper_url": "", "year": 2024, "repo_url": ""},
        dockerfile=render_dockerfile(),
    )


_GOAL_IMPORT = "from decoding import greedy_decode  # noqa: E402\n"
STUB_BODY = "\n".join(BODY.splitlines()[:6]) + "\n    raise NotImplementedError\n"
"""A partly masked stub: the first lines of the golden body kept, the rest replaced."""


def _write_stub_in_test_task(task: Path) -> None:
    """The official 03/06/20 layout: the goal function is defined, partly masked, in the test file itself."""
    golden = task / "golden_files" / "unit_test_1_golden.py"
    golden.write_text(IMPORT.replace(_GOAL_IMPORT, "") + GOLDEN.split("\n\n\n", 1)[1])
    (task / "golden_files" / "decoding_golden.py").unlink()
    _set_impl(task, goal_file="unit_test/unit_test_1.py", golden_file="golden_files/unit_test_1_golden.py")


__all__ = ["write_planted_set"]
