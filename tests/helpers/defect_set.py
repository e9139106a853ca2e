"""A task set written by the tests with one defect per task, as real task sets have them.

``write_defect_set(root)`` writes a clean task plus one task per defect class (near-copies of the golden body in
each form, a .pyc, a test importing the golden module, tautological tests, lowercase "passed", a checker edited
after recording, ...), padded with clean tasks in the official style (a foreign Dockerfile) to ``total`` tasks.
It returns {task folder name: the finding code the task must raise}.
"""

from __future__ import annotations

import json
import os
import py_compile
from pathlib import Path

from helpers.tasks import Impl
from helpers.tasks import write_task as write_task_folder
from lmrbench.authoring.check.dockerfile import render_dockerfile
from lmrbench.authoring.task.mask import mask_source

REPO = "decoder"
GOAL = "decoding.py"

HEADER = '''"""Decoding strategies for a toy language model."""

import numpy as np


'''

BODY = '''    tokens = list(prompt)
    scores = []
    for step in range(max_len):
        logits = np.asarray(logits_fn(np.array(tokens)), dtype=np.float64)
        if temperature != 1.0:
            logits = logits / temperature
        shifted = logits - logits.max()
        probs = np.exp(shifted) / np.exp(shifted).sum()
        best = int(np.argmax(probs))
        scores.append(float(np.log(probs[best] + 1e-12)))
        tokens.append(best)
        if best == eos_id:
            break
    total = float(np.sum(scores))
    length_penalty = ((5.0 + len(scores)) / 6.0) ** 0.6
    return np.array(tokens[len(prompt):]), total / length_penalty
'''

GOLDEN = HEADER + '''def greedy_decode(logits_fn, prompt, max_len, eos_id, temperature=1.0):
    """Decode greedily; return the new tokens and the length-normalised log-probability."""
''' + BODY + '''

def top_k(logits, k):
    """Indices of the k largest logits, largest first."""
    return np.argsort(-np.asarray(logits))[:k]
'''

DOCKERFILE_FOREIGN = "FROM python:3.11-slim\nARG UID=1000\nARG GID=1000\nARG DIR=/workspace\nWORKDIR $DIR\n"

TEST = '''import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from decoding import greedy_decode  # noqa: E402


def lm(tokens):
    return np.array([0.1, 0.5, 0.2, float(len(tokens) % 3)])


def test_decode():
    out, score = greedy_decode(lm, [0], 4, 3)
    assert out.tolist() == [1, 3]
    assert abs(score - -0.99) < 0.5


def test_temperature():
    out, _ = greedy_decode(lm, [0, 0, 0], 1, 3, temperature=2.0)
    assert out.tolist() == [1]
'''


def _body_with(*edits: tuple[str, str]) -> str:
    body = BODY
    for old, new in edits:
        assert old in body, old
        body = body.replace(old, new, 1)
    return body


def _fn(name: str, params: str, body: str, doc: str = "") -> str:
    d = f'    """{doc}"""\n' if doc else ""
    return f"def {name}({params}):\n{d}{body}"


SIG = "logits_fn, prompt, max_len, eos_id, temperature=1.0"

# Each form of near-copy: (file in the repository, its text). The expected code is L202 unless exact (L201), or L207
# for a sibling that lacks the body's distinguishing statement (it samples where the body takes the argmax).
NEAR_COPIES: dict[str, tuple[str, str, str]] = {
    "upstream-extra-param": ("legacy/decode_v0.py", "L201", HEADER + _fn(
        "greedy_decode", SIG + ", verbose=False", BODY, "Upstream version: greedy search with a length penalty.")),
    "other-signature": ("tools/search.py", "L201", HEADER + _fn("search", "fn, prefix, n, stop, temperature=1.0",
                                                               BODY)),
    "extra-print": ("debug_decode.py", "L202", HEADER + _fn("greedy_debug", SIG, _body_with(
        ("        tokens.append(best)\n", "        tokens.append(best)\n        print('step', step, best)\n")))),
    "renamed-variable": ("alt.py", "L201", HEADER + _fn("greedy2", SIG, BODY.replace("probs", "p"))),
    "in-tex": ("paper/appendix.tex", "L201", "\\section{Code}\n\\begin{verbatim}\n" + BODY
               + "\\end{verbatim}\nThe loop stops at EOS.\n"),
    "in-markdown": ("NOTES.md", "L201", "# How decoding works\n\nWe do:\n\n```python\n" + BODY + "```\n"),
    "in-notebook": ("explore.ipynb", "L201", json.dumps({"cells": [
        {"cell_type": "markdown", "source": ["# explore"]},
        {"cell_type": "code", "source": [ln + "\n" for ln in BODY.splitlines()]}]})),
    "sibling-twin": ("sampling.py", "L207", HEADER + _fn("sample_decode", SIG + ", rng=None", _body_with(
        ("    tokens = list(prompt)\n", "    rng = rng or np.random.default_rng(0)\n    tokens = list(prompt)\n"),
        ("        best = int(np.argmax(probs))\n", "        best = int(rng.choice(len(probs), p=probs))\n"),
        ("    length_penalty = ((5.0 + len(scores)) / 6.0) ** 0.6\n", "    length_penalty = 1.0\n")))),
}


def write_task(bench: Path, name: str, *, foreign_dockerfile: bool = False, test: str = TEST,
               golden: str = GOLDEN, impl: dict[str, object] | None = None,
               dockerfile_text: str | None = None) -> Path:
    """One task in the official layout: masked repo, golden file, info.json, a unit test, a Dockerfile."""
    entry = Impl("greedy_decode", "unit_test/unit_test_1.py", "Implement greedy_decode.", "Inference & Decoding",
                 extra={"retrieval_context": [], **(impl or {})})
    return write_task_folder(
        bench, name, repo=REPO, goal_file=GOAL, goal=mask_source(GOLDEN, ["greedy_decode"]), golden=golden,
        impls=[entry], files={"unit_test/unit_test_1.py": test},
        info={"paper_name": "Toy decoding", "paper_url": "", "year": 2024, "repo_url": ""},
        dockerfile=dockerfile_text or (DOCKERFILE_FOREIGN if foreign_dockerfile else render_dockerfile()),
    )


def write_defect_set(root: Path, total: int = 30) -> dict[str, str]:
    """The defect task set under ``root``; returns {task name: expected finding code}."""
    root.mkdir(parents=True, exist_ok=True)
    expected: dict[str, str] = {}
    n = 1

    def new(label: str, code: str, **kw: object) -> Path:
        nonlocal n
        name = f"{n}-{label}"
        n += 1
        expected[name] = code
        return write_task(root, name, **kw)  # type: ignore[arg-type]

    new("Clean", "")
    for label, (rel, code, text) in NEAR_COPIES.items():
        task = new(label, code)
        path = task / REPO / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    task = new("pyc", "L203")
    cache = task / REPO / "__pycache__"
    cache.mkdir()
    src = task / "golden_files" / "decoding_golden.py"
    py_compile.compile(str(src), cfile=str(cache / "decoding.cpython-311.pyc"), doraise=True)
    new("imports-golden", "T301", test=TEST.replace("from decoding import", "from decoding_golden import")
        .replace("parent.parent))", "parent.parent.parent / 'golden_files'))"))
    new("never-calls", "T302", test="def test_shapes():\n    assert [1, 2][0] == 1\n")
    new("self-expected", "T303", test=TEST.replace(
        "    assert out.tolist() == [1, 3]\n", "    expected, _ = greedy_decode(lm, [0], 4, 3)\n"
        "    assert out.tolist() == expected.tolist()\n").replace("    assert abs(score - -0.99) < 0.5\n", ""))
    new("lowercase-passed", "T304", test=(
        "import logging\nfrom decoding import greedy_decode\n\n"
        "if __name__ == '__main__':\n    out, _ = greedy_decode(lambda t: [0, 1], [0], 2, 1, temperature=0.5)\n"
        "    if out.tolist() == [1]:\n        logging.info('test passed')\n    else:\n"
        "        logging.info('Test Failed')\n"))
    task = new("checker-edited", "T305")
    data = task / REPO / "unit_test" / "data" / "impl_1"
    data.mkdir(parents=True)
    data.joinpath("index.json").write_text(json.dumps({
        "implementation": 1, "command": "python run.py", "runner": "local", "recorded_at": "2026-01-01T00:00:00Z",
        "max_calls": 3, "checker": {"kind": "numeric", "rtol": 1e-5, "atol": 1e-8, "text_threshold": 0.9},
        "cases": []}))
    info = json.loads((task / "info.json").read_text())
    info["implementations"][0]["checker"] = {"kind": "numeric", "rtol": 0.1, "atol": 1e-8, "text_threshold": 0.9}
    (task / "info.json").write_text(json.dumps(info))
    new("golden-syntax", "F103", golden=GOLDEN.replace("    total = float(", "    total = float((", 1))
    new("missing-goal", "F104", impl={"goal_function": "beam_decode"})
    new("no-goal-function", "F106", impl={"goal_function": ""})
    task = new("symlink-out", "F112")
    os.symlink("/etc/hostname", task / REPO / "host.txt")
    new("test-as-context", "F110", impl={"retrieval_context": ["unit_test/unit_test_1.py"]})
    while n <= total:
        new("Official", "D403", foreign_dockerfile=True)
    return expected
