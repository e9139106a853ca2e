"""Regenerate the example task set in examples/tasks from the sources and paper texts beside this script.

    python examples/make_examples.py [--runner docker|local]   # replaces examples/tasks/<N-Name>/

Each source folder becomes a git repository (fixed author and date, so the pinned commit is reproducible), each
paper text becomes a PDF made with PyMuPDF, the task is authored with lmrbench's own create_task, and its unit
tests are recorded with record_tests from the repository's own driver script, exactly as an author would with
`lmrbench task new` and `lmrbench task record`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pymupdf

from lmrbench.authoring.record.bodycoverage import coverage_text
from lmrbench.authoring.record.record import record_tests
from lmrbench.authoring.task.task_new import create_task
from lmrbench.authoring.task.task_spec import FunctionRef, TaskSpec
from lmrbench.benchmark.execution.sandboxes import get_sandbox

HERE = Path(__file__).resolve().parent
TASKS = HERE / "tasks"

EXAMPLES = [
    {
        "name": "1-DPO",
        "source": "dpo-numpy",
        "paper": "dpo.txt",
        "function": "dpo/trainers.py::preference_loss",
        "category": "Training Objectives & Optimization",
        "year": 2023,
        "instruction": (
            "Implement the preference_loss function in dpo/trainers.py following Section 2 of the paper: the DPO "
            "loss with the conservative (label smoothing) variant of Section 2.1, the reference-free variant of "
            "Section 2.2, and the implicit rewards of Section 2.3. Return per-example values; do not reduce."
        ),
        "record": "python train.py --steps 1",
        "max_calls": 3,
    },
    {
        "name": "2-BERTScore",
        "source": "bertscore-numpy",
        "paper": "bertscore.txt",
        "function": "bertscore_np/score.py::greedy_cos_idf",
        "category": "Evaluation Metrics",
        "year": 2020,
        "instruction": (
            "Implement greedy_cos_idf in bertscore_np/score.py: normalise the token embeddings, match tokens "
            "greedily by cosine similarity and return the idf-weighted precision, recall and F1 of Section 2."
        ),
        "record": "python run_metric.py",
        "max_calls": 7,
    },
    {
        "name": "3-ContrastiveDecoding",
        "source": "contrastive-decoding-numpy",
        "paper": "contrastive.txt",
        "function": "cdecode/decoding.py::contrastive_scores",
        "category": "Decoding & Search Strategies",
        "year": 2023,
        "instruction": (
            "Implement contrastive_scores in cdecode/decoding.py: the contrastive objective of Section 1 with the "
            "adaptive plausibility constraint of Section 2, for a batch of positions, at the given temperature."
        ),
        "record": "python generate.py --steps 6",
        "max_calls": 3,
    },
]

GIT_ENV = {
    "GIT_AUTHOR_NAME": "lmrbench examples",
    "GIT_AUTHOR_EMAIL": "examples@lmrbench.invalid",
    "GIT_COMMITTER_NAME": "lmrbench examples",
    "GIT_COMMITTER_EMAIL": "examples@lmrbench.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
}


def make_pdf(text_file: Path, pdf: Path) -> None:
    """Typeset a plain-text paper into a small A4 PDF, about 45 lines a page."""
    lines = text_file.read_text(encoding="utf-8").splitlines()
    title, rest = lines[0], lines[1:]
    doc = pymupdf.open()
    chunks = [rest[i : i + 45] for i in range(0, len(rest), 45)] or [[]]
    for k, chunk in enumerate(chunks):
        page = doc.new_page(width=595, height=842)
        y = 60
        if k == 0:
            page.insert_textbox(pymupdf.Rect(50, y, 545, y + 50), title, fontsize=14, fontname="hebo", align=1)
            y += 55
        body = "\n".join(chunk)
        page.insert_textbox(pymupdf.Rect(50, y, 545, 800), body, fontsize=9.5, fontname="helv")
        page.insert_text((290, 820), str(k + 1), fontsize=9)
    doc.save(pdf, garbage=4, deflate=True, no_new_id=True)
    doc.close()


def git_repo(source: Path, dest: Path) -> None:
    """Copy ``source`` to ``dest`` and commit it as one reproducible commit."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, **GIT_ENV}
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"], ["git", "commit", "-q", "-m", "initial"]):
        subprocess.run(cmd, cwd=dest, env=env, check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runner", choices=["docker", "local"], default=None,
                        help="where to record (default: docker when the engine answers)")
    args = parser.parse_args()
    sandbox = get_sandbox(args.runner)
    TASKS.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lmrbench-examples-") as tmp:
        for ex in EXAMPLES:
            repo = Path(tmp) / ex["source"]
            git_repo(HERE / "sources" / ex["source"], repo)
            pdf = Path(tmp) / f"{ex['source']}.pdf"
            make_pdf(HERE / "papers" / ex["paper"], pdf)
            title = (HERE / "papers" / ex["paper"]).read_text(encoding="utf-8").splitlines()[0]
            task = create_task(
                TaskSpec(
                    source=str(repo),
                    functions=[FunctionRef.parse(ex["function"])],
                    instructions=[ex["instruction"]],
                    bench=TASKS,
                    category=ex["category"],
                    paper=pdf,
                    paper_url="",  # made-up papers: nowhere online; the PDF is bundled in the task
                    paper_name=title,
                    year=ex["year"],
                    name=ex["name"],
                    repo_url=f"examples/sources/{ex['source']}",
                ),
                force=True,
            )
            result = record_tests(task, 1, ex["record"], sandbox=sandbox, max_calls=ex["max_calls"], force=True)
            print(f"{task.path.relative_to(HERE.parent)}: {ex['function']}: {len(result.cases)} cases recorded "
                  f"from `{ex['record']}` ({result.total_bytes} bytes)")
            for cov in result.coverage:
                print(f"  coverage of the golden body: {coverage_text(cov)}")
            for line in result.summary:
                print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
