"""An official results folder for the paper's six Table 2 runs, written by the tests from the paper's own figures.

Each run has 28 implementations (tasks ``1-T1`` ... ``28-T28``, function 0), one annotator and the judge's
analyses, with counts that give the paper's percentages, except for the published files' four known departures:
no results.txt for BaseAgent gpt4o and o4mini, the human labels of BaseAgent gpt4.1 and o4mini swapped, one
OpenHands gpt4o verdict LC where the paper counts CC, and an OpenHands gpt4.1 results.txt with 10 passes (the
paper's 32.1% is 9).
"""

from __future__ import annotations

import json
from pathlib import Path

from lmrbench.benchmark.report.paper_figures import TABLE2, PaperRow
from lmrbench.benchmark.report.paper_table import paper_count

N = 28
FOLDERS = {"standard": "BaseAgent", "agent": "OpenHands"}
AGENTS = {"standard": "no_agent", "agent": "openhands_agent"}
MODELS = {"GPT-4o": "gpt4o", "GPT-4.1": "gpt4.1", "o4-mini": "o4mini"}


def _scores(cc: float, lc: float) -> list[int]:
    """28 scores on 1-3 with the paper's CC and LC shares (the rest LI)."""
    k3, k2 = paper_count(cc, N), paper_count(lc, N)
    assert k3 is not None and k2 is not None
    return [3] * k3 + [2] * k2 + [1] * (N - k3 - k2)


def write_paper_results(root: Path) -> Path:
    """Write the results folder (see the module); returns ``root``."""
    labels: list[dict[str, object]] = []
    for row, cells in TABLE2.items():
        folder, model = FOLDERS[row.setting], MODELS[row.model]
        judge = _scores(cells["cc"], cells["lc"])
        if (row.setting, row.model) == ("agent", "GPT-4o"):
            judge = [3] + [2] * 3 + [1] * 24  # the files: 1 CC, 3 LC; the paper: 2 and 2
        for k, score in enumerate(judge, 1):
            path = root / "llm_as_a_judge_evaluation" / folder / model / f"{k}-T{k}_repo{k}_0_analysis.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f'Analysis.\n{{"category": "{score}", "rationale": ["r"]}}\n')
        source = row
        if row.setting == "standard" and row.model in ("GPT-4.1", "o4-mini"):  # swapped in the files
            source = PaperRow("standard", "o4-mini" if row.model == "GPT-4.1" else "GPT-4.1")
        human = _scores(TABLE2[source]["h_cc"], TABLE2[source]["h_lc"])
        labels += [
            {"annotator": "ann", "agent_type": AGENTS[row.setting], "model_name": model, "paper_index": k,
             "function_index": 0, "human_judge_result": score, "comment": ""}
            for k, score in enumerate(human, 1)
        ]  # fmt: skip
        if row.setting == "standard" and row.model != "GPT-4.1":
            continue  # the files hold no results.txt for these two
        passed = paper_count(cells["unit"], N)
        assert passed is not None
        if (row.setting, row.model) == ("agent", "GPT-4.1"):
            passed = 10
        lines = [f"{k}-T{k}/unit_test_1.log: {'PASS' if k <= passed else 'FAIL (found 1 failure lines)'}"
                 for k in range(1, N + 1)]  # fmt: skip
        path = root / "unit_test_evaluation" / folder / model / "results.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + f"\n\nTotal log files: {N}\nPassed files:    {passed}\n")
    (root / "human_evaluation").mkdir(parents=True)
    (root / "human_evaluation" / "ann.json").write_text(json.dumps(labels))
    return root
