"""The ``inspect_ai`` entry point: importing it registers the ``lmrbench`` sandbox provider and the ``lmr_bench``
task (and its scorer ``lmr_grade``) with Inspect AI."""

from lmrbench.integrations.inspect.sandbox import LmrbenchSandbox
from lmrbench.integrations.inspect.task import lmr_bench, lmr_grade

__all__ = ["LmrbenchSandbox", "lmr_bench", "lmr_grade"]
