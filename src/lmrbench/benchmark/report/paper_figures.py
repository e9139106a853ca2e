"""The paper's published figures, as data: Table 2, Table 3, Table 5 and the table of Appendix I (Table 6).

Every figure below is copied from CITATION, as printed there (percentages of 28 implementations; Table 5 in
statsmodels' layout). Nothing here is computed: the comparisons live in paper_table.py, binary.py and the
regression. A run maps to a row of the paper by its setting (standard prompting or an agent), its model and its
input setting (``paper_row``).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

from lmrbench.benchmark.pipeline.context import run_context
from lmrbench.schemas.run import RunManifest

CITATION = (
    "Yan et al., LMR-Bench: Evaluating LLM Agents' Ability on Reproducing Language Modeling Research, "
    "EMNLP 2025 (arXiv:2506.17335)"
)
SHORT_CITATION = "Yan et al. 2025"

Setting = Literal["standard", "agent"]
"""Standard prompting (the paper's "no agent") or an agent (the paper's OpenHands)."""
MODELS = ("GPT-4o", "GPT-4.1", "o4-mini")
"""The paper's models, in its row order."""
TABLE2_COLUMNS = ("unit", "cc", "lc", "li", "h_cc", "h_lc", "h_li")
"""Unit-test accuracy, the judge's CC/LC/LI and the humans' CC/LC/LI (all %)."""
TABLE3_COLUMNS = ("unit", "cc", "lc", "li")
N_PER_RUN = 28
"""Implementations per model in the paper (28 tasks' functions)."""
PAPER_TASKS = (
    "01-DPO",
    "02-HITs",
    "03-DoLa",
    "04-CD",
    "05-SimPO",
    "06-RepE",
    "07-bertscore",
    "08-StepLength",
    "09-GDPZero",
    "10-TimeDistill",
    "11-moverscore",
    "13-DecBound",
    "14-EmojiCrypt",
    "15-EmpathyBias",
    "16-KnowProb",
    "18-MassActiv",
    "19-Native-Sparse-Attention",
    "20-CAD",
    "21-TimeMixer",
    "22-TokenDPO",
    "23-SimCLR",
    "24-DeViEnt",
    "25-AdaLora",
    "26-Hyena",
    "27-Lion",
    "28-SPIN",
    "29-Sophia",
    "30-ERGO",
    "31-Syn-Chain",
)
"""The official task set's folders (LMR-Bench at commit 2198c422): the tasks the paper's figures are of."""


def taskset_digest(names: list[str] | tuple[str, ...]) -> str:
    """sha256 of a task set's sorted folder names: the same set of tasks gives the same digest, whatever the
    files hold (a checkout without its large files included)."""
    return hashlib.sha256("\n".join(sorted(names)).encode()).hexdigest()


PAPER_TASKSET_DIGEST = taskset_digest(PAPER_TASKS)


def on_paper_taskset(manifest: RunManifest) -> bool:
    """Whether a run's figures are of the paper's task set: an import of the official results, or a run whose
    task set's digest is the official set's."""
    return manifest.official is not None or taskset_digest([t.name for t in manifest.tasks]) == PAPER_TASKSET_DIGEST


@dataclass(frozen=True)
class PaperRow:
    """A row of the paper's tables: a setting, a model and an input setting (``full`` in Table 2)."""

    setting: Setting
    model: str
    context: str = "full"

    @property
    def name(self) -> str:
        """The row as the paper names it (``OpenHands (GPT-4.1)``, ``GPT-4o``, ``Paper-only OpenHands (o4-mini)``)."""
        base = f"OpenHands ({self.model})" if self.setting == "agent" else self.model
        return base if self.context == "full" else f"{_CONTEXT_NAMES.get(self.context, self.context)} {base}"


_CONTEXT_NAMES = {"paper-only": "Paper-only", "paper+goal-file": "Paper + goal file"}


def _rows(setting: Setting, context: str, values: tuple[tuple[float, ...], ...], columns: tuple[str, ...]) -> dict[
    PaperRow, dict[str, float]
]:
    return {
        PaperRow(setting, model, context): dict(zip(columns, row, strict=True))
        for model, row in zip(MODELS, values, strict=True)
    }


TABLE2: dict[PaperRow, dict[str, float]] = {
    **_rows("standard", "full", (
        (39.3, 17.9, 10.7, 71.4, 25.0, 14.3, 60.7),
        (42.9, 7.1, 28.6, 64.3, 32.1, 28.6, 39.3),
        (42.9, 25.0, 21.4, 53.6, 35.7, 32.1, 32.1),
    ), TABLE2_COLUMNS),
    **_rows("agent", "full", (
        (25.0, 7.1, 7.1, 85.7, 21.4, 17.9, 60.7),
        (32.1, 17.9, 14.3, 67.9, 32.1, 25.0, 42.9),
        (35.7, 35.7, 14.3, 50.0, 39.3, 21.4, 39.3),
    ), TABLE2_COLUMNS),
}  # fmt: skip
"""Table 2: unit tests, LLM-as-a-judge and human evaluation, standard prompting and OpenHands (%)."""

TABLE3: dict[PaperRow, dict[str, float]] = {
    **_rows("agent", "paper-only", ((21.4, 10.7, 7.1, 82.1), (32.1, 28.6, 14.3, 57.1), (39.3, 46.4, 3.6, 50.0)),
            TABLE3_COLUMNS),
    **_rows("agent", "paper+goal-file", ((25.0, 3.6, 7.1, 89.3), (28.6, 7.1, 14.3, 78.6), (39.3, 42.9, 17.9, 39.3)),
            TABLE3_COLUMNS),
}  # fmt: skip
"""Table 3: OpenHands under the "Paper" and "+ Goal File" inputs: unit tests and the judge's CC/LC/LI (%)."""

TABLE6: dict[PaperRow, float] = {
    PaperRow("standard", "GPT-4o"): 14.29,
    PaperRow("standard", "GPT-4.1"): 21.43,
    PaperRow("standard", "o4-mini"): 25.00,
    PaperRow("agent", "GPT-4o"): 7.14,
    PaperRow("agent", "GPT-4.1"): 28.57,
    PaperRow("agent", "o4-mini"): 39.29,
}
"""Appendix I, Table 6: human labels collapsed to Completely Correct (%); Not Completely Correct is the rest."""


@dataclass(frozen=True)
class Coefficient:
    """One row of a logit table in statsmodels' layout (the paper's Table 5, and lmrbench's own fit)."""

    name: str
    coef: float
    std_err: float
    z: float
    p: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class PaperCoefficient(Coefficient):
    """A row of Table 5: ``name`` as lmrbench's regression names the predictor (``model[...]`` rows name the
    paper's model), ``paper_name`` as the paper prints it."""

    paper_name: str = ""


TABLE5 = (
    PaperCoefficient("const", -0.4313, 0.330, -1.306, 0.192, -1.079, 0.216, paper_name="const"),
    PaperCoefficient("depth", 0.8049, 0.249, 3.232, 0.001, 0.317, 1.293, paper_name="avg_dir_depth"),
    PaperCoefficient("branch_factor", -0.6750, 0.225, -2.995, 0.003, -1.117, -0.233, paper_name="avg_branch_factor"),
    PaperCoefficient("imbalance", 0.2426, 0.226, 1.071, 0.284, -0.201, 0.686, paper_name="directory_imbalance"),
    PaperCoefficient("goal_lines", -0.3478, 0.225, -1.547, 0.122, -0.788, 0.093, paper_name="goal_function_length"),
    PaperCoefficient("model[GPT-4o]", -0.4458, 0.475, -0.939, 0.348, -1.376, 0.484, paper_name="model_name_gpt4o"),
    PaperCoefficient("model[o4-mini]", 0.2807, 0.476, 0.590, 0.555, -0.653, 1.214, paper_name="model_name_o4mini"),
)
"""Table 5 (Appendix G): logit of success on the structure predictors and model indicators, OpenHands runs,
GPT-4.1 the reference model."""
TABLE5_REFERENCE = "GPT-4.1"

_MODEL = re.compile(r"(?:(?P<gpt41>gpt[-_]?4\.?1)|(?P<gpt4o>gpt[-_]?4o)|(?P<o4mini>o4[-_]?mini))(?:-\d{4}-\d\d-\d\d)?")
_MODEL_NAMES = {"gpt4o": "GPT-4o", "gpt41": "GPT-4.1", "o4mini": "o4-mini"}


def paper_model(name: str) -> str | None:
    """The paper's model a model id stands for (``gpt-4.1``, ``openai/gpt-4o-2024-08-06``, ``o4mini``), or None
    (``gpt-4o-mini`` is not GPT-4o)."""
    m = _MODEL.fullmatch(name.rsplit("/", 1)[-1].strip().lower())
    return _MODEL_NAMES[m.lastgroup] if m and m.lastgroup else None


def paper_row(manifest: RunManifest) -> PaperRow | None:
    """The paper's row a run stands for, or None: an official import by its agent type and model folder, a run
    made here by its source (generate: standard prompting; agent: the paper's agent rows), model and context."""
    if manifest.official is not None:
        src = manifest.official
        setting: Setting | None = {"no_agent": "standard", "openhands_agent": "agent"}.get(src.agent_type)  # type: ignore[assignment]
        model = paper_model(src.model_name)
        return PaperRow(setting, model) if setting and model else None
    model_id = manifest.generation.model if manifest.generation else manifest.label
    model = paper_model(model_id or "") or _model_in_label(manifest.label)
    if model is None:
        return None
    return PaperRow("standard" if manifest.source == "generate" else "agent", model, run_context(manifest.settings))


def _model_in_label(label: str) -> str | None:
    """A paper model named at the end of an agent's label (``openhands-gpt-4.1``, ``agent_o4-mini``), else None."""
    parts = re.split(r"[-_\s]", label)
    for k in range(len(parts)):
        if found := paper_model("-".join(parts[k:])):
            return found
    return None
