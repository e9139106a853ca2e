"""The host's record of an agent export (``<data dir>/exports/<id>.json``, copied as the export's ``export.json``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class AgentExport(BaseModel):
    """How an agent export was made: kept on the host (``<data dir>/exports/<export_id>.json``), where
    ``import-agent`` reads the setting and the tasks from; a copy sits at the top of the export as
    ``export.json``, which ``import-agent`` reads only for ``export_id`` (the agent can edit that copy)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    schema_version: Literal[1] = 1
    """Version of this format."""
    tool_version: str
    """lmrbench's version."""
    context: Literal["full", "paper+goal-file", "paper-only"] = "full"
    """What the agent was shown of each repository (the input setting)."""
    tasks: list[str] = Field(default_factory=list)
    """Task folders exported."""
    export_id: str = ""
    """The export's random name, under which the host keeps its record ('' in exports made before records)."""
    digests: dict[str, str] = Field(default_factory=dict)
    """Task folder -> sha256 over the files exported for it (what the agent was handed)."""
    created_at: str = ""
    """When the export was written, ISO 8601 UTC."""
