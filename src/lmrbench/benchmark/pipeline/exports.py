"""The host's record of what ``export-agent`` handed an agent: the setting, the tasks and a digest of each.

An agent works in the export folder and may edit anything there, ``export.json`` included, so ``import-agent``
reads the setting and the exported tasks from the host's copy (``<data dir>/exports/<export_id>.json``), found by
the export's random id; the folder's ``export.json`` only names that id.
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime
from pathlib import Path

from lmrbench.benchmark.pipeline.rundir import digest_files, load_model, save_model
from lmrbench.defaults import data_root
from lmrbench.errors import LmrError
from lmrbench.schemas.agent_export import AgentExport

EXPORT_JSON = "export.json"


def utc_now() -> str:
    """The time now, ISO 8601 UTC to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def exports_dir() -> Path:
    """Where the host keeps its records of agent exports."""
    return data_root() / "exports"


def folder_digest(folder: Path) -> str:
    """sha256 over every regular file under ``folder`` (relative paths and contents)."""
    files = {p.relative_to(folder).as_posix(): p.read_bytes()
             for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}
    return digest_files(files)


def new_record(staged: Path, tasks: list[str], context: str, version: str) -> AgentExport:
    """The record of an export staged in ``staged`` (one folder per task of ``tasks``)."""
    return AgentExport(tool_version=version, context=context, tasks=tasks,  # type: ignore[arg-type]
                       export_id=secrets.token_hex(16), created_at=utc_now(),
                       digests={name: folder_digest(staged / name) for name in tasks})


def keep_record(record: AgentExport) -> Path:
    """Write the host's copy of ``record``; returns its path."""
    path = exports_dir() / f"{record.export_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    save_model(path, record)
    return path


def host_record(agent_dir: Path) -> AgentExport | None:
    """The host's record of the export ``agent_dir`` was made from (found by the id its export.json names), or
    None when there is none on this machine (an export from elsewhere, an older one, an id that was edited)."""
    path = Path(agent_dir) / EXPORT_JSON
    if not path.is_file():
        return None
    try:
        export_id = load_model(path, AgentExport).export_id
    except LmrError:
        return None
    if not re.fullmatch(r"[0-9a-f]{32}", export_id):
        return None
    kept = exports_dir() / f"{export_id}.json"
    return load_model(kept, AgentExport) if kept.is_file() else None
