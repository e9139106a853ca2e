"""JSON Schema files of every on-disk format, generated from the models (``lmrbench schema export``)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from lmrbench.fsutil import atomic_write_text


def exported_models() -> dict[str, type[BaseModel]]:
    """File stem -> model, for every format lmrbench reads or writes. Add new formats here."""
    from lmrbench.schemas.task_info import TaskInfo

    models: dict[str, type[BaseModel]] = {"info": TaskInfo}
    try:  # formats defined by later stages register themselves in schemas/registry.py
        from lmrbench.schemas.registry import EXTRA_MODELS

        models.update(EXTRA_MODELS)
    except ImportError:
        pass
    return models


def render_schemas() -> dict[str, str]:
    """File name -> JSON text of each schema, deterministic."""
    out: dict[str, str] = {}
    for stem, model in sorted(exported_models().items()):
        schema = model.model_json_schema(by_alias=True)
        out[f"{stem}.schema.json"] = json.dumps(schema, indent=2, sort_keys=True) + "\n"
    return out


def export_schemas(folder: Path) -> list[Path]:
    """Write every schema into ``folder`` (atomically), removing stale ``*.schema.json`` files."""
    folder.mkdir(parents=True, exist_ok=True)
    rendered = render_schemas()
    written = []
    for name, text in rendered.items():
        atomic_write_text(folder / name, text)
        written.append(folder / name)
    for stale in folder.glob("*.schema.json"):
        if stale.name not in rendered:
            stale.unlink()
    return written
