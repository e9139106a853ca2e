"""An agent's actions by kind (read, edit, run, search, think, submit), over a run and split by outcome, as the
paper's Section 5.1 does for OpenHands (Figures 5 and 6).

Sources: a run folder of ``lmrbench agent`` (``agent/<task>/trajectory.json``, mini-swe-agent's format: each
action a bash command, sorted by what the command does), and an OpenHands ``output.jsonl`` or folder of sessions
(``file_store/sessions/<task>/events/<n>.json``), each event counted by its own action name (read, edit, run and
run_ipython, think and message, finish, browse). The outcome of a task comes from the unit-test results of a run
(every implementation passed: passed; any scored and not passed: failed; no result: unknown); an OpenHands
instance is matched to a task by its name, instance_id or number.
"""

from __future__ import annotations

import re
import shlex
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lmrbench import jsonsafe
from lmrbench.benchmark.analysis.outcomes import unit_test_outcomes
from lmrbench.benchmark.pipeline.rundir import RunDir
from lmrbench.errors import LmrError
from lmrbench.fsutil import read_capped
from lmrbench.schemas.agent_run import ActionCounts, ActionKind, ActionReport

MAX_LOG_BYTES = 2_000_000_000
SUBMIT_WORD = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
_SEARCH = {"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "locate", "ls", "tree", "pwd", "which", "fd"}
_READ = {"cat", "head", "tail", "less", "more", "nl", "wc", "file", "stat", "pdftotext", "diff", "od", "xxd", "strings"}
_EDIT = {"tee", "patch", "cp", "mv", "rm", "mkdir", "touch", "ed", "truncate", "ln"}
_INTO_FILE = {">", ">>", ">|", "&>", "&>>"}
"""Redirections whose target is a file (``>&`` duplicates a descriptor instead)."""
_OPENHANDS: dict[str, ActionKind] = {
    "read": "read", "edit": "edit", "write": "edit", "run": "run", "run_ipython": "run", "think": "think",
    "message": "think", "finish": "submit", "browse": "search", "browse_interactive": "search"}  # fmt: skip


def classify_command(command: str) -> ActionKind:
    """The kind of one shell command: submit, edit (sed -i, any redirect into a file, tee, patch, cp, mv...),
    search (grep, find, ls...), read (cat, head, sed -n, nl...), or run (anything else: python, pytest, pip)."""
    text = command.strip()
    if SUBMIT_WORD in text.split("\n", 1)[0]:
        return "submit"
    firsts = _command_heads(_words(text))
    if _writes_a_file(text):
        return "edit"
    for head, rest in firsts:
        if head in _EDIT or (head in ("sed", "perl") and any(w.startswith("-i") for w in rest)):
            return "edit"
        if head == "git" and rest[:1] in (["apply"], ["checkout"]):
            return "edit"
    head, rest = firsts[0] if firsts else ("", [])
    if head in _SEARCH or (head == "git" and rest[:1] == ["grep"]):
        return "search"
    if head in _READ or (head == "sed" and "-n" in rest) or head == "awk":
        return "read"
    return "run"


def _writes_a_file(text: str) -> bool:
    """Whether a redirection anywhere in the command (outside quotes, before a here-document's body) writes a
    file other than /dev/null."""
    for line in text.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.commenters = "#"
        try:
            tokens = list(lexer)
        except ValueError:
            tokens = line.split()
        for op, target in zip(tokens, [*tokens[1:], ""], strict=True):
            if op in _INTO_FILE and target and target != "/dev/null":
                return True
        if "<<" in tokens or "<<-" in tokens:
            return False  # what follows is the here-document's body, not commands
    return False


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text.split("\n", 1)[0], comments=True)
    except ValueError:
        return text.split()


def _command_heads(words: list[str]) -> list[tuple[str, list[str]]]:
    """Each simple command of a line (split at &&, ||, ;, |) as (program, arguments), ``cd`` and env
    assignments left out."""
    out: list[tuple[str, list[str]]] = []
    current: list[str] = []
    for word in [*words, ";"]:
        if word in ("&&", "||", ";", "|"):
            while current and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", current[0]):
                current = current[1:]
            if current and current[0] not in ("cd", "export", "source", "."):
                out.append((current[0].rsplit("/", 1)[-1], current[1:]))
            current = []
        else:
            current.append(word)
    return out


def mini_actions(trajectory: dict[str, Any]) -> Counter[str]:
    """The actions of a mini-swe-agent trajectory by kind; a reply without a usable action counts as think."""
    counts: Counter[str] = Counter()
    for msg in trajectory.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        extra: dict[str, Any] = msg["extra"] if isinstance(msg.get("extra"), dict) else {}
        if msg.get("role") == "assistant":
            for action in extra.get("actions") or []:
                counts[classify_command(str(action.get("command", "")) if isinstance(action, dict) else "")] += 1
        elif msg.get("role") == "user" and extra.get("interrupt_type") == "FormatError":
            counts["think"] += 1
    return counts


def openhands_actions(history: list[Any]) -> Counter[str]:
    """The agent's actions of one OpenHands history (pairs of action and observation, or a flat event list)."""
    counts: Counter[str] = Counter()
    for event in _events(history):
        if event.get("source") == "agent" and isinstance(event.get("action"), str):
            kind = _OPENHANDS.get(event["action"])
            if kind is not None:
                counts[kind] += 1
    return counts


def _events(history: list[Any]) -> Iterator[dict[str, Any]]:
    for item in history:
        if isinstance(item, dict):
            yield item
        elif isinstance(item, list):
            yield from (e for e in item if isinstance(e, dict))


def _json(text: str | bytes, where: Path | str) -> Any:
    try:
        return jsonsafe.loads(text, where=where)
    except (ValueError, UnicodeDecodeError) as exc:
        raise LmrError(f"not JSON: {exc}", where) from None


def _task_outcomes(results: Path | None) -> tuple[dict[str, str], dict[str, str]]:
    """(task -> passed/failed, instance_id -> task) of a run folder's unit-test results."""
    if results is None:
        return {}, {}
    run = RunDir(results)
    manifest = run.require_manifest()
    by_task: dict[str, list[bool]] = {}
    for (task, _), passed in unit_test_outcomes(run).items():
        by_task.setdefault(task, []).append(passed)
    outcomes = {t: "passed" if all(v) else "failed" for t, v in by_task.items()}
    ids = {e.instance_id: e.name for e in manifest.tasks}
    return outcomes, ids


def _sessions(folder: Path) -> list[Path]:
    """The session folders of OpenHands' file store (``[file_store/][sessions/]<task>/events/<n>.json``)."""
    for root in (folder, folder / "sessions", folder / "file_store" / "sessions"):
        found = sorted(p for p in root.glob("*/events") if p.is_dir()) if root.is_dir() else []
        if found:
            return [p.parent for p in found]
    return []


def _task_of(iid: str, outcomes: dict[str, str], ids: dict[str, str], name: str = "") -> str:
    """The run's task an OpenHands instance (or session folder) stands for: by name, instance_id or number."""
    if name in outcomes:
        return name
    return ids.get(iid) or next((t for t in outcomes if t.split("-", 1)[0] == iid), "")


def action_report(source: Path, results: Path | None = None) -> ActionReport:
    """The action report of ``source``: a run folder of ``lmrbench agent`` or an OpenHands output.jsonl (or a
    folder holding one); ``results`` is the run whose unit-test results give each task's outcome (default: the
    source when it is a run folder)."""
    source = Path(source)
    groups: list[tuple[str, Counter[str]]] = []
    if source.is_dir() and (source / "run.json").is_file():
        agent = "mini-swe-agent"
        results = results or source
        outcomes, _ = _task_outcomes(results)
        for path in sorted((source / "agent").glob("*/trajectory.json")):
            data = _json(read_capped(path, MAX_LOG_BYTES), path)
            if not isinstance(data, dict):
                raise LmrError("not a trajectory (a JSON object)", path)
            groups.append((outcomes.get(path.parent.name, "unknown"), mini_actions(data)))
    elif source.is_dir() and _sessions(source):
        agent = "OpenHands"
        outcomes, ids = _task_outcomes(results)
        for folder in _sessions(source):
            events = [_json(read_capped(p, MAX_LOG_BYTES), p) for p in sorted(
                (folder / "events").glob("*.json"), key=lambda p: int(p.stem) if p.stem.isdigit() else -1)]
            task = _task_of(folder.name.split("-", 1)[0], outcomes, ids, folder.name)
            groups.append((outcomes.get(task, "unknown"), openhands_actions(events)))
    else:
        log = source / "output.jsonl" if source.is_dir() else source
        if not log.is_file():
            raise LmrError("neither a run folder (run.json), an OpenHands output.jsonl nor a folder of OpenHands "
                           "sessions (<task>/events/<n>.json)", source)
        agent = "OpenHands"
        outcomes, ids = _task_outcomes(results)
        for number, line in enumerate(read_capped(log, MAX_LOG_BYTES).decode("utf-8", "replace").splitlines(), 1):
            if not line.strip():
                continue
            entry = _json(line, f"{log}:{number}")
            if not isinstance(entry, dict) or not isinstance(entry.get("history"), list):
                raise LmrError(f"line {number}: not an OpenHands output line (no history list)", log)
            task = _task_of(str(entry.get("instance_id", "")), outcomes, ids)
            groups.append((outcomes.get(task, "unknown"), openhands_actions(entry["history"])))
    report = ActionReport(source=str(source), agent=agent)
    for outcome, counts in groups:
        for target in (report.all, report.by_outcome.setdefault(outcome, ActionCounts())):
            target.trajectories += 1
            for kind, n in counts.items():
                target.counts[kind] = target.counts.get(kind, 0) + n
    return report
