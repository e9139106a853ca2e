"""Reading the official LMR-Bench results layout: human label files and the judge's analysis files.

```
RESULTS/human_evaluation/<annotator>.json
    [{"annotator", "agent_type", "model_name", "paper_index", "function_index", "human_judge_result", "comment"}]
RESULTS/llm_as_a_judge_evaluation/<BaseAgent|OpenHands>/<model>/<task folder>_<repo folder>_<i>_analysis.txt
```
``function_index`` and ``<i>`` are 0-based positions in info.json's implementations; labels and the judge's
categories are on the paper's scale (1 logically incorrect, 2 logically correct, 3 completely correct).
Nothing here writes: the input files are only read.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from lmrbench.errors import LmrError

HUMAN_DIR = "human_evaluation"
JUDGE_DIR = "llm_as_a_judge_evaluation"
AGENT_FOLDERS = {"no_agent": "BaseAgent", "openhands_agent": "OpenHands"}
FOLDER_AGENTS = {v: k for k, v in AGENT_FOLDERS.items()}
_FIELDS = ("annotator", "agent_type", "model_name", "paper_index", "function_index", "human_judge_result")
_CATEGORY = re.compile(r'"category"\s*:\s*"?\s*(-?\d+)\s*"?')
_BARE = re.compile(r"(?<![\d.])([1-3])\W*\Z")
_ANALYSIS = re.compile(r"(?P<task>[^_]+)_(?P<repo>.+)_(?P<fi>\d+)_analysis\.txt")
MAX_BYTES = 20_000_000


@dataclass
class HumanRecord:
    """One official human label, its label already on the 1-3 scale."""

    annotator: str
    agent_type: str
    model_name: str
    paper_index: int
    function_index: int
    score: int
    comment: str
    file: Path
    record: int


@dataclass
class Analysis:
    """One judge analysis file."""

    agent_type: str
    model_name: str
    task: str
    repo: str
    function_index: int
    text: str
    score: int | None
    rationale: list[str]
    file: Path


def _int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
        return int(value)
    return None


def read_text(path: Path) -> str:
    """A results file as text; LmrError for a symbolic link, a file over MAX_BYTES or bytes that are not UTF-8."""
    if path.is_symlink():
        raise LmrError("is a symbolic link; refusing to follow it", path)
    if path.stat().st_size > MAX_BYTES:
        raise LmrError(f"larger than {MAX_BYTES // 1_000_000} MB", path)
    try:
        return path.read_text("utf-8")
    except UnicodeDecodeError:
        raise LmrError("not UTF-8 text", path) from None


def read_human_files(results: Path) -> tuple[list[HumanRecord], list[str]]:
    """Every human record, labels on 1-3, and the warnings (annotators whose 0-2 scale was shifted).

    An annotator whose labels include 0 and no 3 used a 0-2 scale: their labels are shifted by one (in memory:
    the files are never written). Any other label outside 1-3 is an error naming the file and the record.
    """
    folder = Path(results) / HUMAN_DIR
    if not folder.is_dir():
        return [], []
    raw: list[tuple[HumanRecord, int]] = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(read_text(path))
        except ValueError as exc:
            raise LmrError(f"not valid JSON ({exc})", path) from None
        if not isinstance(data, list):
            raise LmrError("must hold a JSON list of label records", path)
        for k, rec in enumerate(data):
            raw.append((_record(rec, path, k), _label_value(rec, path, k)))
    by_annotator: dict[str, list[int]] = defaultdict(list)
    for rec, value in raw:
        by_annotator[rec.annotator].append(value)
    shifted = {a for a, values in by_annotator.items() if 0 in values and 3 not in values}
    warnings = [
        f"annotator {a!r} labelled on a 0-2 scale (0 present, no 3): their labels were shifted to 1-3"
        for a in sorted(shifted)
    ]
    out = []
    for rec, value in raw:
        score = value + 1 if rec.annotator in shifted else value
        if score not in (1, 2, 3):
            raise LmrError(
                f"record {rec.record} (annotator {rec.annotator!r}, paper {rec.paper_index}, function "
                f"{rec.function_index}): human_judge_result {value} is outside 1-3",
                rec.file,
            )
        rec.score = score
        out.append(rec)
    return out, warnings


def _label_value(rec: object, path: Path, k: int) -> int:
    value = _int(rec.get("human_judge_result")) if isinstance(rec, dict) else None
    if value is None:
        raise LmrError(f"record {k}: human_judge_result must be an integer", path)
    return value


def _record(rec: object, path: Path, k: int) -> HumanRecord:
    if not isinstance(rec, dict):
        raise LmrError(f"record {k} is not a JSON object", path)
    missing = [f for f in _FIELDS if f not in rec]
    if missing:
        raise LmrError(f"record {k} lacks {', '.join(missing)}", path)
    annotator = rec["annotator"] if isinstance(rec["annotator"], str) and rec["annotator"].strip() else path.stem
    if rec["agent_type"] not in AGENT_FOLDERS:
        raise LmrError(
            f"record {k}: agent_type {rec['agent_type']!r} is not one of {', '.join(AGENT_FOLDERS)}", path
        )
    if not isinstance(rec["model_name"], str) or not rec["model_name"].strip():
        raise LmrError(f"record {k}: model_name must be a non-empty string", path)
    paper, fi = _int(rec["paper_index"]), _int(rec["function_index"])
    if paper is None or paper < 0 or fi is None or fi < 0:
        raise LmrError(f"record {k}: paper_index and function_index must be integers >= 0", path)
    comment = rec.get("comment") or ""
    return HumanRecord(
        annotator=annotator.strip(),
        agent_type=rec["agent_type"],
        model_name=rec["model_name"].strip(),
        paper_index=paper,
        function_index=fi,
        score=0,
        comment=comment if isinstance(comment, str) else json.dumps(comment),
        file=path,
        record=k,
    )


def parse_analysis(text: str) -> tuple[int | None, list[str]]:
    """The verdict of an analysis text: the last ``"category": "N"`` of a JSON object, else a bare 1-3 at the end.

    Returns (score or None, rationale bullets when a JSON object holds them).
    """
    rationale: list[str] = []
    matches = list(_CATEGORY.finditer(text))
    if matches:
        last = matches[-1]
        start = text.rfind("{", 0, last.start())
        end = text.find("}", last.end())
        if start >= 0 and end > start:
            try:
                obj = json.loads(text[start : end + 1])
                if isinstance(obj, dict) and isinstance(obj.get("rationale"), list):
                    rationale = [str(r) for r in obj["rationale"]]
            except ValueError:
                pass
        score = int(last.group(1))
        return (score if score in (1, 2, 3) else None), rationale
    bare = _BARE.search(text.strip())
    return (int(bare.group(1)) if bare else None), rationale


def read_analyses(results: Path) -> tuple[list[Analysis], list[str]]:
    """Every ``*_analysis.txt`` file, and one line per folder or file that could not be read as one."""
    root = Path(results) / JUDGE_DIR
    if not root.is_dir():
        return [], []
    out: list[Analysis] = []
    skipped: list[str] = []
    for agent_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        if agent_dir.name not in FOLDER_AGENTS:
            skipped.append(f"{agent_dir}: not an agent folder ({' or '.join(FOLDER_AGENTS)})")
            continue
        for model_dir in sorted(p for p in agent_dir.iterdir() if p.is_dir()):
            for path in sorted(model_dir.glob("*_analysis.txt")):
                m = _ANALYSIS.fullmatch(path.name)
                if not m:
                    skipped.append(f"{path}: name is not <task folder>_<repo folder>_<function index>_analysis.txt")
                    continue
                text = read_text(path)
                score, rationale = parse_analysis(text)
                out.append(
                    Analysis(FOLDER_AGENTS[agent_dir.name], model_dir.name, m.group("task"), m.group("repo"),
                             int(m.group("fi")), text, score, rationale, path)
                )  # fmt: skip
    return out, skipped


def paper_number(task: str) -> int | None:
    """The leading number of a task folder's name (``07-bertscore`` -> 7), or None."""
    m = re.match(r"(\d+)", task)
    return int(m.group(1)) if m else None
