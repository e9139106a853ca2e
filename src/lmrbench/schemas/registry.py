"""Formats beyond info.json that ``lmrbench schema export`` writes. Each stage adds its own models here."""

from __future__ import annotations

from pydantic import BaseModel

EXTRA_MODELS: dict[str, type[BaseModel]] = {}
