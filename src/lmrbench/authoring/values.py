"""The value codec and checkers as lmrbench uses them, and the runtime files shipped into tasks.

The code lives in ``lmrbench/runtime/`` as standalone modules (standard library + numpy) because the same
files run inside a task's sandbox, where lmrbench is not installed: ``lmrbench_values`` (encoding, case
files), ``lmrbench_checkers`` (comparisons), ``lmrbench_record`` and ``sitecustomize`` (instrumentation).
"""

from __future__ import annotations

from lmrbench.runtime import RECORD_RUNTIME, RUNTIME_DIR, TEST_RUNTIME, runtime_files
from lmrbench.runtime.lmrbench_values import (
    Case,
    Decoder,
    Encoder,
    UnencodableValue,
    describe,
    digest,
    load_case,
    read_case_file,
    write_case,
)

__all__ = [
    "RUNTIME_DIR",
    "TEST_RUNTIME",
    "RECORD_RUNTIME",
    "Case",
    "Decoder",
    "Encoder",
    "UnencodableValue",
    "describe",
    "digest",
    "load_case",
    "read_case_file",
    "runtime_files",
    "write_case",
]

