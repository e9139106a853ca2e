"""What both runners stream into a run and read back: the payload, the boot command, the closing frame.

The boot script (``runtime/lmrbench_boot.py``) is the same in a container and in a local temp folder, so the
two runners keep one contract: same layout, same split between the trusted command and the candidate's
worker, same frame at the end. See ``lmrbench.core.sandbox`` for the layout.
"""

from __future__ import annotations

import base64
import collections
import contextlib
import functools
import importlib.util
import marshal
import os
import stat
import sys
import threading
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from lmrbench.core.sandbox import RunResult, Worker, tail
from lmrbench.core.treeview import Tree, TreeView
from lmrbench.runtime import boot_source
from lmrbench.runtime.lmrbench_protocol import END, INFRA_MARK, OUT_LIMIT, OUT_MARK

__all__ = ["END", "INFRA_MARK", "OUT_LIMIT", "OUT_MARK", "BOOT_SOURCE", "boot_argv", "boot_command", "run_spec",
           "Frame"]

BOOT_SOURCE = boot_source()
ORPHAN_GRACE = 30
"""Seconds past its timeout after which a run's boot script kills the command itself (its harness gone)."""


def run_spec(root: str, argv: list[str], worker: Worker | None, *, timeout: float, env: dict[str, str],
             ids: dict[str, list[int]] | None, reads: list[str] | None = None,
             preload: list[str] | None = None) -> dict[str, object]:
    """A run's spec for the boot script (see ``runtime/lmrbench_boot.py``): strings, numbers, lists and dicts
    only. The boot ends the command by itself ``ORPHAN_GRACE`` seconds past ``timeout``. ``reads`` (local runs,
    no ids): confine the run, the worker reading only its own tree and these paths. ``preload``: the zygote's modules
    (default: the worker's frameworks)."""
    spec: dict[str, object] = {
        "root": root,
        "argv": list(argv),
        "worker": list(worker.argv) if worker else None,
        "env": dict(env),
        "deadline": int(timeout) + ORPHAN_GRACE,
        "ids": ids if worker else ({"trusted": ids["trusted"]} if ids else None),
    }
    if reads is not None and not ids:
        spec["confine"] = {"reads": list(reads)}
    modules = list(preload) if preload is not None else list(worker.frameworks) if worker is not None else []
    if modules:
        spec["preload"] = modules
    return spec


def boot_command(spec: dict[str, object]) -> list[str]:
    """The command that starts the boot script with ``spec`` (``marshal``, which the boot reads without
    importing anything)."""
    # -I -S: the boot needs the standard library only; site and the environment's .pth files would cost
    # every run their import time, and nothing from the working folder or PYTHON* variables may load in it.
    # A zygote (``preload``) runs site, as the sides' interpreters would: its imports come from site-packages.
    flags = ["-I"] if spec.get("preload") else ["-I", "-S"]
    return ["python3", *flags, "-c", BOOT_SOURCE, marshal.dumps(spec, 4).hex()]


def boot_argv(root: str, argv: list[str], worker: Worker | None, *, timeout: float,
              env: dict[str, str], ids: dict[str, list[int]] | None,
              reads: list[str] | None = None) -> list[str]:
    """The command that starts one run (see ``run_spec``)."""
    return boot_command(run_spec(root, argv, worker, timeout=timeout, env=env, ids=ids, reads=reads))


def _entry(kind: bytes, mode: int, name: str, data: bytes = b"") -> bytes:
    """One entry of the payload format (see ``runtime/lmrbench_boot.py``)."""
    raw = name.encode("utf-8", "surrogateescape")
    return b"%s %o %d %d\n" % (kind, mode, len(raw), len(data)) + raw + data


def _listing_entries(base: Path, listing: list[tuple[str, os.stat_result]], arcname: str) -> bytes:
    """The entries of ``listing`` (see ``TreeView.listing``): folders readable and files readable and writable
    by their owner, links as they are."""
    out = [_entry(b"d", 0o700 | (base.stat().st_mode & 0o7777), arcname)]
    for rel, st in listing:
        path = base / rel
        if stat.S_ISLNK(st.st_mode):
            out.append(_entry(b"l", 0o777, f"{arcname}/{rel}", os.fsencode(os.readlink(path))))
        elif stat.S_ISDIR(st.st_mode):
            out.append(_entry(b"d", 0o700 | (st.st_mode & 0o7777), f"{arcname}/{rel}"))
        elif stat.S_ISREG(st.st_mode):
            out.append(_entry(b"f", 0o600 | (st.st_mode & 0o7777), f"{arcname}/{rel}", path.read_bytes()))
    return b"".join(out)


_Signature = tuple[tuple[str, int, int, int, int, int], ...]
_views: collections.OrderedDict[tuple[object, ...], tuple[_Signature, bytes]] = collections.OrderedDict()
_views_lock = threading.Lock()
VIEW_CACHE = 8
"""Views of unchanged folders whose streamed bytes are kept (a task's trusted and candidate's views)."""
VIEW_CACHE_LIMIT = 64 << 20
"""Largest view kept."""


def _tree_bytes(tree: Tree, arcname: str) -> bytes:
    """A tree's entries under ``arcname``. The part a view reads from its base is kept while no file there
    changes (same paths, sizes, modes, inodes, modification and change times): a task's views are streamed
    once, and each run adds only its own files."""
    view = tree if isinstance(tree, TreeView) else TreeView(Path(tree))
    listing = view.listing()
    key = (str(view.base.resolve()), arcname, view.drop, frozenset(view.files))
    signature = tuple((rel, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) for rel, st in listing)
    with _views_lock:
        kept = _views.get(key) if isinstance(tree, TreeView) else None
    if kept is not None and kept[0] == signature:
        base = kept[1]
    else:
        base = _listing_entries(view.base, listing, arcname)
        if isinstance(tree, TreeView) and len(base) <= VIEW_CACHE_LIMIT:
            with _views_lock:
                _views[key] = (signature, base)
                _views.move_to_end(key)
                while len(_views) > VIEW_CACHE:
                    _views.popitem(last=False)
    added = [_entry(b"f", 0o644, f"{arcname}/{rel}", data) for rel, data in sorted(view.files.items())]
    return b"".join([base, *added])


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


def _file_entries(folder: str, files: dict[str, bytes]) -> list[bytes]:
    out = [_entry(b"d", 0o755, folder)]
    for name, data in _with_bytecode(files).items():
        out.append(_entry(b"f", 0o644, f"{folder}/{name}", data))
    return out


def payload(tree: Tree, harness_files: dict[str, bytes], worker: Worker | None) -> bytes:
    """What the boot script unpacks: trusted/{repo,harness} and, for a split run, cand/{repo,harness}. A tree
    holds no history, caches or compiled files."""
    parts = [_tree_bytes(tree, "trusted/repo"), *_file_entries("trusted/harness", harness_files)]
    if worker is not None:
        parts += [_tree_bytes(worker.tree, "cand/repo"), *_file_entries("cand/harness", worker.files)]
    return b"".join([*parts, END])


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


def closing(run: RunResult, stdout: bytes, out_dir: Path | None) -> RunResult:
    """``run`` (exit status, output, duration) completed from the boot script's frame on ``stdout``: its
    infrastructure error, or the out folder written under ``out_dir`` and the worker's output."""
    if run.timed_out or run.infra_error:
        return replace(run, output=tail(run.output))
    frame = read_frame(stdout)
    if frame.infra_error:
        return replace(run, output=tail(run.output), infra_error=frame.infra_error)
    output = run.output
    if frame.out_tar and out_dir is not None:
        try:
            unpack_out(frame.out_tar, Path(out_dir))
        except ValueError as exc:
            output += f"\n[the out folder could not be read back: {exc}]"
    return replace(run, output=tail(output), worker_output=tail(frame.worker_output))


def unpack_out(data: bytes, out_dir: Path) -> None:
    """Write the out folder's regular files and folders under ``out_dir`` (nothing else, nothing outside);
    ValueError, and nothing else, for a listing that is cut short, malformed or cannot be written (a file where
    a folder is, a name the file system refuses)."""
    try:
        _unpack_out(data, out_dir)
    except OSError as exc:
        raise ValueError(f"the out folder cannot be written: {exc.strerror or exc}") from None


def _unpack_out(data: bytes, out_dir: Path) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    total, at = 0, 0
    while True:
        end = data.find(b"\n", at, at + 256)
        if end < 0:
            raise ValueError("the out folder's listing is cut short")
        header, at = data[at:end], end + 1
        if header + b"\n" == END:
            return
        try:
            kind, _mode, n_text, size_text = header.split()
            n, size = int(n_text), int(size_text)
        except ValueError:
            raise ValueError(f"the out folder's listing holds {header[:60]!r}") from None
        name, body = data[at:at + n].decode("utf-8", errors="replace"), data[at + n:at + n + size]
        at += n + size
        if len(body) != size or n < 0 or size < 0:
            raise ValueError("the out folder's listing is cut short")
        parts = PurePosixPath(name).parts
        if not parts or parts[0] != "out" or ".." in parts or name.startswith("/") or kind not in (b"d", b"f"):
            continue
        if kind == b"f" and len(parts) < 2:
            raise ValueError("the out folder's listing names the out folder itself as a file")
        dest = out_dir.joinpath(*parts[1:])
        if kind == b"d":
            dest.mkdir(parents=True, exist_ok=True)
            continue
        total += size
        if total > OUT_LIMIT:
            raise ValueError(f"the out folder is larger than {OUT_LIMIT} bytes")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(body)
