"""What both runners stream into a run and read back: the payload tar, the boot command, the closing frame.

The boot script (``runtime/lmrbench_boot.py``) is the same in a container and in a local temp folder, so the
two runners keep one contract: same layout, same split between the trusted command and the candidate's
worker, same frame at the end. See ``lmrbench.core.sandbox`` for the layout.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import importlib.util
import io
import json
import marshal
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from lmrbench.core.sandbox import Worker
from lmrbench.runtime import runtime_files

SKIP_PARTS = frozenset({".git", "__pycache__"})
"""Folders never streamed into a run."""
OUT_LIMIT = 64 << 20
"""Largest out folder read back (the boot script stops packing there)."""
OUT_MARK = b"LMRBENCH-OUT "
INFRA_MARK = b"LMRBENCH-INFRA "
BOOT_SOURCE = runtime_files(("lmrbench_boot.py",))["lmrbench_boot.py"].decode("utf-8")


def boot_argv(root: str, argv: list[str], worker: Worker | None, *, deadline: float,
              env: dict[str, str], ids: dict[str, list[int]] | None) -> list[str]:
    """The command that starts a run: the boot script and its spec."""
    spec = {
        "root": root,
        "argv": argv,
        "worker": worker.argv if worker else None,
        "env": env,
        "deadline": deadline,
        "ids": ids if worker else ({"trusted": ids["trusted"]} if ids else None),
    }
    # -I -S: the boot needs the standard library only; site and the environment's .pth files would cost
    # every run their import time, and nothing from the working folder or PYTHON* variables may load in it.
    return ["python3", "-I", "-S", "-c", BOOT_SOURCE, json.dumps(spec)]


def _add_tree(tar: tarfile.TarFile, tree: Path, arcname: str) -> None:
    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if SKIP_PARTS.intersection(Path(info.name).parts):
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mode |= 0o600 if info.isfile() else 0o700
        return info

    tar.add(str(tree), arcname=arcname, filter=keep)


@functools.lru_cache(maxsize=64)
def _bytecode(name: str, source: bytes) -> bytes:
    """The module's bytecode as a .pyc that needs no source timestamp (unchecked hash): every run imports the
    harness, and compiling it afresh in each process costs more than the run's own work on a small task. An
    interpreter of another version ignores it (the file name carries the host's cache tag)."""
    code = compile(source, name, "exec", dont_inherit=True)
    flags = 0b01  # hash-based, not checked against the source
    header = importlib.util.MAGIC_NUMBER + flags.to_bytes(4, "little") + importlib.util.source_hash(source)
    return header + marshal.dumps(code)


def _with_bytecode(files: dict[str, bytes]) -> dict[str, bytes]:
    out = dict(files)
    tag = sys.implementation.cache_tag
    for name, data in files.items():
        if name.endswith(".py") and "/" not in name and tag:
            with contextlib.suppress(SyntaxError, ValueError):  # the sandbox's interpreter will say what is wrong
                out[f"__pycache__/{name[:-3]}.{tag}.pyc"] = _bytecode(name, data)
    return out


def _add_files(tar: tarfile.TarFile, folder: str, files: dict[str, bytes]) -> None:
    info = tarfile.TarInfo(folder)
    info.type, info.mode = tarfile.DIRTYPE, 0o755
    tar.addfile(info)
    for name, data in _with_bytecode(files).items():
        info = tarfile.TarInfo(f"{folder}/{name}")
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))


def payload(tree: Path, harness_files: dict[str, bytes], worker: Worker | None) -> bytes:
    """The tar the boot script unpacks: trusted/{repo,harness} and, for a split run, cand/{repo,harness}."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        _add_tree(tar, Path(tree), "trusted/repo")
        _add_files(tar, "trusted/harness", harness_files)
        if worker is not None:
            _add_tree(tar, Path(worker.tree), "cand/repo")
            _add_files(tar, "cand/harness", worker.files)
    return buf.getvalue()


@dataclass(frozen=True)
class Frame:
    """What the boot script said at the end."""

    infra_error: str | None = None
    out_tar: bytes = b""
    worker_output: str = ""


def read_frame(stdout: bytes) -> Frame:
    """The boot script's closing frame (an empty Frame when it never wrote one)."""
    if stdout.startswith(INFRA_MARK):
        return Frame(infra_error=stdout[len(INFRA_MARK):].decode(errors="replace").strip())
    at = stdout.rfind(OUT_MARK)
    if at < 0:
        return Frame()
    header, _, rest = stdout[at + len(OUT_MARK):].partition(b"\n")
    try:
        _, n, m = (int(x) for x in header.split()[:3])
        out = base64.b64decode(rest[:n])
        log = base64.b64decode(rest[n:n + m]).decode("utf-8", errors="replace")
    except ValueError:
        return Frame()
    return Frame(out_tar=out, worker_output=log)


def unpack_out(data: bytes, out_dir: Path) -> None:
    """Write the out folder's regular files and folders under ``out_dir`` (nothing else, nothing outside)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    total = 0
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        for m in tar.getmembers():
            parts = Path(m.name).parts
            if not parts or parts[0] != "out" or ".." in parts or not (m.isfile() or m.isdir()):
                continue
            dest = out_dir.joinpath(*parts[1:])
            if m.isdir():
                dest.mkdir(parents=True, exist_ok=True)
                continue
            total += m.size
            if total > OUT_LIMIT:
                raise ValueError(f"the out folder is larger than {OUT_LIMIT} bytes")
            dest.parent.mkdir(parents=True, exist_ok=True)
            src = tar.extractfile(m)
            dest.write_bytes(src.read(m.size) if src else b"")
