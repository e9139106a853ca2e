"""What a failed golden run's output says stopped it before the golden code could answer: a module that cannot
be imported, a data file that is missing (and whether the repository's ``.gitignore`` kept it out), a GPU or a
download the tests need. Read from the run's evidence (its whole log and the junit cases' messages), the first
such error in the output; a golden run that failed otherwise ran and answered wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath

from lmrbench.core.datareads import git_ignored
from lmrbench.core.taskset import Task
from lmrbench.schemas.validation import NotRun

_IMPORT = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'"
                     r"|ImportError: cannot import name '(\w+)' from '([\w.]+)'")
_MISSING = re.compile(r"(?:FileNotFoundError|OSError|IOError): \[Errno 2\] No such file or directory: '([^'\n]+)'")
_GPU = re.compile(r"Torch not compiled with CUDA enabled|No CUDA GPUs are available|Found no NVIDIA driver"
                  r"|CUDA driver version is insufficient|no CUDA-capable device is detected"
                  r"|Attempting to deserialize object on a CUDA device")
_DOWNLOAD = re.compile(r"We couldn't connect to '([^']+)'|LocalEntryNotFoundError|OfflineModeIsEnabled"
                       r"|Temporary failure in name resolution|Failed to establish a new connection"
                       r"|Network is unreachable|urlopen error|Max retries exceeded with url: (\S+)"
                       r"|Can't load (?:tokenizer|config|the model) for '([^']+)'"
                       r"|'([^']+)' is not a local folder and is not a valid model identifier")


def _import(task: Task, m: re.Match[str]) -> NotRun:
    what = f"module {m.group(1)!r}" if m.group(1) else f"{m.group(2)!r} from module {m.group(3)!r}"
    top = (m.group(1) or m.group(3) or "").split(".")[0]
    local = (task.repo_dir / top).is_dir() or (task.repo_dir / f"{top}.py").is_file()
    fix = ("the module is the repository's own: install it as the original Dockerfile does (`lmrbench image "
           "dockerfile TASK --force` carries `pip install -e`)" if local else
           f"add the package that provides {top!r} to the task's requirements (try it with `lmrbench image try`)")
    return NotRun(cause="import", detail=f"the golden run cannot import {what}", fix=fix)


def _repo_relative(task: Task, path: str) -> str:
    """``path`` as the repository names it: relative as given, or the part of an absolute sandbox path from the
    repository folder's name or from the first folder the repository holds."""
    parts = PurePosixPath(path).parts
    if not PurePosixPath(path).is_absolute():
        return PurePosixPath(path).as_posix()
    name = task.info.repo_folder_name
    if name in parts:
        return "/".join(parts[len(parts) - parts[::-1].index(name):])
    for k in range(1, len(parts)):
        if (task.repo_dir / parts[k]).exists():
            return "/".join(parts[k:])
    return path


def _data(task: Task, m: re.Match[str]) -> NotRun:
    rel = _repo_relative(task, m.group(1))
    there = not PurePosixPath(rel).is_absolute() and (task.repo_dir / rel).exists()
    where = "it is in the task but not where the run looked" if there else "it exists nowhere in the task"
    ignored = None if there or PurePosixPath(rel).is_absolute() else git_ignored(task.repo_dir, rel)
    why = f"; the repository's .gitignore ignores it ({ignored!r}), so it was never committed" if ignored else ""
    return NotRun(cause="data", detail=f"the tests read {rel}, which is missing: {where}{why}",
                  fix="copy the file into the task from where it was made, or record the tests again")


def _gpu(task: Task, m: re.Match[str]) -> NotRun:
    return NotRun(cause="gpu", detail=f"the tests need a GPU this machine lacks ({m.group(0)})",
                  fix="run where a GPU is, or make the tests fall back to the CPU (`task check` T310, T314)")


def _download(task: Task, m: re.Match[str]) -> NotRun:
    named = next((g for g in m.groups() if g), "")
    return NotRun(cause="download", detail="the tests download " + (f"{named!r}" if named else "from the network")
                  + f", and the run has no network ({m.group(0)[:120]})",
                  fix="record the model's outputs, or ship a local copy in the task (`task check` T311)")


_READERS: tuple[tuple[re.Pattern[str], Callable[[Task, re.Match[str]], NotRun]], ...] = (
    (_IMPORT, _import), (_MISSING, _data), (_GPU, _gpu), (_DOWNLOAD, _download))


def run_stopped(task: Task, texts: list[str]) -> NotRun | None:
    """The first import, missing data file, GPU or download error in a failed golden run's output (``texts``:
    its logs, then its cases' messages), as a not-run cause; None when there is none."""
    for text in texts:
        found = [(m.start(), read, m) for pattern, read in _READERS if (m := pattern.search(text))]
        if found:
            _, read, m = min(found, key=lambda f: f[0])
            return read(task, m)
    return None
