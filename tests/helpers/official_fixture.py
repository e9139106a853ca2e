"""A results folder in the official LMR-Bench layout, written by the tests: four annotators on disjoint papers
(dave on a 0-2 scale), judge analyses in both verdict styles, and the figures computed by hand from it."""

from __future__ import annotations

import json
from pathlib import Path

# (annotator, agent_type, paper, function, raw label as written, label on 1-3)
HUMAN = [
    ("alice", "no_agent", 1, 0, 3, 3),
    ("alice", "no_agent", 1, 1, 2, 2),
    ("alice", "no_agent", 2, 0, 1, 1),
    ("bob", "no_agent", 3, 0, 3, 3),
    ("bob", "openhands_agent", 3, 0, 1, 1),
    ("carol", "no_agent", 4, 0, 2, 2),
    ("dave", "no_agent", 5, 0, 2, 3),
    ("dave", "openhands_agent", 5, 0, 0, 1),
]

JSON_STYLE = 'Analysis of the candidate.\n```json\n{{\n  "category": "{n}",\n  "rationale": ["{why}"]\n}}\n```\n'
# Two JSON objects: the verdict is the last one.
TWO_OBJECTS = (
    'First thought: {{"category": "3", "rationale": ["draft"]}}\n'
    'On reflection the loop is wrong.\n{{"category": "{n}", "rationale": ["{why}"]}}\n'
)
BARE_STYLE = "The candidate drops the normalisation term, so the logic differs.\n\nFinal category: {n}\n"

# (agent folder, task folder, repo folder, function index, text template, judge score on 1-3)
ANALYSES = [
    ("BaseAgent", "01-Alpha", "alpha-repo", 0, JSON_STYLE, 3),
    ("BaseAgent", "01-Alpha", "alpha-repo", 1, BARE_STYLE, 2),
    ("BaseAgent", "02-Beta", "beta_repo", 0, TWO_OBJECTS, 2),
    ("BaseAgent", "03-Gamma", "gamma", 0, JSON_STYLE, 3),
    ("BaseAgent", "04-Delta", "delta", 0, JSON_STYLE, 3),
    ("BaseAgent", "05-Eps", "eps", 0, BARE_STYLE, 3),
    ("OpenHands", "03-Gamma", "gamma", 0, BARE_STYLE, 1),
    ("OpenHands", "05-Eps", "eps", 0, JSON_STYLE, 2),
]

# Pairs (human, judge): (3,3) (2,2) (1,2) (3,3) (2,3) (3,3) (1,1) (1,2).
# Confusion rows human 1-3, columns judge 1-3: [1,2,0] [0,1,1] [0,0,3]; rows 3,2,3; columns 1,3,4.
# exact 5/8; binary 7/8 (only (2,3) disagrees on "3 or not"); pe = (3*1 + 2*3 + 3*4)/64 = 21/64,
# kappa = (40/64 - 21/64) / (43/64) = 19/43; quadratic: observed 0.75/8, expected 22/64, kappa = 1 - 3/11 = 8/11.
EXPECTED = {"n": 8, "exact": 0.625, "cohen_kappa": 19 / 43, "weighted_kappa": 8 / 11, "binary": 0.875}
CONFUSION = [[1, 2, 0], [0, 1, 1], [0, 0, 3]]


def write_official(root: Path) -> Path:
    """Write the results folder; returns ``root``."""
    human = root / "human_evaluation"
    human.mkdir(parents=True)
    files: dict[str, list[dict[str, object]]] = {}
    for annotator, agent, paper, fi, raw, _ in HUMAN:
        files.setdefault(annotator, []).append({
            "annotator": annotator, "agent_type": agent, "model_name": "gpt4o", "paper_index": paper,
            "function_index": fi, "human_judge_result": raw, "comment": f"{annotator} on paper {paper}",
        })  # fmt: skip
    for annotator, records in files.items():
        (human / f"{annotator}.json").write_text(json.dumps(records, indent=2))
    for folder, task, repo, fi, template, score in ANALYSES:
        path = root / "llm_as_a_judge_evaluation" / folder / "gpt4o" / f"{task}_{repo}_{fi}_analysis.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(template.format(n=score, why=f"judge says {score}"))
    (root / "llm_as_a_judge_evaluation" / "BaseAgent" / "gpt4o" / "summary.txt").write_text("Total cases: 6\n")
    return root


def expected_records() -> list[dict[str, object]]:
    """The records an export must give back: dave's labels on 1-3."""
    return sorted(
        (
            {"annotator": a, "agent_type": agent, "model_name": "gpt4o", "paper_index": p, "function_index": fi,
             "human_judge_result": score, "comment": f"{a} on paper {p}"}
            for a, agent, p, fi, _, score in HUMAN
        ),
        key=lambda r: json.dumps(r, sort_keys=True),
    )  # fmt: skip
