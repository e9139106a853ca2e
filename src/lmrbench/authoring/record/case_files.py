"""Case files as the recording reads them: each file is parsed once per process, however many of the recording's
steps read it (amplification, plans, selection, the probe's results: hundreds of reads of a few dozen files).
Every read gets its own JSON and its own copies of the arrays, so no caller sees another's changes; a file
written anew (another inode, size or time) is read anew."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from lmrbench.runtime.lmrbench_values import read_case_file

_READ: dict[tuple[str, int, int, int], tuple[str, dict[str, np.ndarray]]] = {}
_MOST = 512
"""Files kept at once; past it the cache starts again."""


def read_case(path: Path | str) -> tuple[dict, dict[str, np.ndarray]]:
    """The JSON and the arrays of a case file, as ``read_case_file`` gives them (ValueError for a file that is
    no case)."""
    st = os.stat(path)
    key = (str(path), st.st_ino, st.st_mtime_ns, st.st_size)
    hit = _READ.get(key)
    if hit is None:
        case, arrays = read_case_file(path)
        if len(_READ) >= _MOST:
            _READ.clear()
        hit = _READ[key] = (json.dumps(case), arrays)
    return json.loads(hit[0]), {k: a.copy() for k, a in hit[1].items()}

