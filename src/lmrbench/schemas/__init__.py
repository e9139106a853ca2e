"""The on-disk contracts of lmrbench as pydantic models. No I/O beyond load and save."""

from lmrbench.schemas.categories import Category, category_from_text, parse_category
from lmrbench.schemas.task_info import (
    INFO_JSON,
    CheckerSettings,
    Implementation,
    TaskInfo,
    load_task_info,
    save_task_info,
)

__all__ = [
    "INFO_JSON",
    "Category",
    "CheckerSettings",
    "Implementation",
    "TaskInfo",
    "category_from_text",
    "load_task_info",
    "parse_category",
    "save_task_info",
]
