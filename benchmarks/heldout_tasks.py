"""Held-out numpy tasks for ``wrong_answers.py --set heldout``."""

from __future__ import annotations

from typing import Any

TASKS: list[dict[str, Any]] = []
