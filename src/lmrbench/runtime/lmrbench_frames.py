"""The byte formats the boot reads and writes, on the sandbox's side of the boundary: the payload it unpacks,
the out folder it packs, a warm boot's request line and the closing frame. The host's side is
``lmrbench.harness.payload``.

The payload and the out folder share one format: entries of ``<kind> <mode octal> <name length> <size>\\n``,
the name (UTF-8, relative, ``/``-separated), then ``size`` bytes (a file's content, a link's target); kind
``d`` folder, ``f`` file, ``l`` symbolic link; ``e 0 0 0\\n`` ends it. A warm request is ``RUN_MARK<spec bytes>
<payload bytes> <timeout ms>\\n``; the closing frame ``OUT_MARK<exit> <n> <m>\\n`` then the base64 of the out
folder (n bytes) and of the worker's output (m bytes).

Shipped as a prelude of the boot (``runtime.boot_source``: the protocol's source, this one's, then the boot's),
so it imports only ``binascii``, ``errno``, ``os``, ``stat`` and ``sys``; a test imports it as a module. Every
reader here raises ``ValueError``, and nothing else, for malformed bytes.
"""

import binascii
import errno
import os
import stat
import sys

if __name__ != "__main__":  # imported by a test; as part of the boot, the protocol's source ran first
    from lmrbench_protocol import END, OUT_LIMIT, OUT_MARK, RUN_MARK

CHUNK = 1 << 20
HEADER_LIMIT = 256
"""Longest entry header or request line read."""
NAME_LIMIT = 4096
"""Longest name in the payload (the kernel's PATH_MAX)."""
_FILE_SYSTEM = frozenset((errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS, errno.EMFILE, errno.ENFILE, errno.ENOMEM))
"""Errors of the file system itself, not of the payload."""


def safe_name(name):
    parts = name.split("/")
    if name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"unsafe name in the payload: {name!r}")
    return os.path.join(*parts)


def unpack_tree(stream, root):
    """Write the payload's entries under ``root``. ValueError, and nothing else, for a payload that is malformed,
    cut short, or names a path twice, beneath a file or beneath a link of its own (nothing lands outside
    ``root``); an OSError only where the file system itself fails (a full disk)."""
    links = set()
    while True:
        header = stream.readline(HEADER_LIMIT)
        if header == END:
            return
        fields = header.split()
        if len(fields) != 4 or not header.endswith(b"\n"):
            raise ValueError(f"not an entry of the payload: {header[:60]!r}")
        kind, mode, n, size = fields
        try:
            mode, n, size = int(mode, 8) & 0o7777, int(n), int(size)
        except ValueError:
            raise ValueError(f"not an entry of the payload: {header[:60]!r}") from None
        if kind not in (b"d", b"f", b"l") or not 0 < n <= NAME_LIMIT or size < 0:
            raise ValueError(f"unknown entry in the payload: {header[:60]!r}")
        raw = stream.read(n)
        if len(raw) != n:
            raise ValueError("the payload ends inside a name")
        name = safe_name(raw.decode("utf-8", "surrogateescape"))
        parts = name.split(os.sep)
        if any(os.sep.join(parts[:i]) in links for i in range(1, len(parts) + 1)):
            raise ValueError(f"a name in the payload lies beneath one of its links or repeats one: {name!r}")
        try:
            _write_entry(stream, kind, mode, size, os.path.join(root, name), links, name)
        except OSError as exc:
            if exc.errno in _FILE_SYSTEM:
                raise
            raise ValueError(f"the payload's {name!r} cannot be written: {exc.strerror or exc}") from None


def _write_entry(stream, kind, mode, size, path, links, name):
    os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
    if kind == b"d":
        os.makedirs(path, 0o700, exist_ok=True)
        os.chmod(path, mode | 0o700)
    elif kind == b"l":
        target = stream.read(size)
        if len(target) != size:
            raise ValueError("the payload ends inside a link")
        os.symlink(target, path.encode("utf-8", "surrogateescape"))
        links.add(name)
    else:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode | 0o600)
        try:
            while size:
                chunk = stream.read(min(size, CHUNK))
                if not chunk:
                    raise ValueError("the payload ends inside a file")
                os.write(fd, chunk)
                size -= len(chunk)
        finally:
            os.close(fd)


def entry(kind, mode, name, data):
    raw = name.encode("utf-8", "surrogateescape")
    return b"%s %o %d %d\n" % (kind, mode, len(raw), len(data)) + raw + data


def pack_out(out):
    """The out folder's folders and regular files (no links), at most OUT_LIMIT bytes of files."""
    parts, total = [entry(b"d", 0o755, "out", b"")], 0
    for folder, dirs, files in os.walk(out):
        dirs.sort()
        rel = os.path.relpath(folder, out)
        prefix = "out/" if rel == "." else "out/" + rel.replace(os.sep, "/") + "/"
        for name in dirs:
            if not os.path.islink(os.path.join(folder, name)):
                parts.append(entry(b"d", 0o755, prefix + name, b""))
        for name in sorted(files):
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            total += os.path.getsize(path)
            if total > OUT_LIMIT:
                sys.stderr.write(f"[out folder over {OUT_LIMIT} bytes: {name} and later files dropped]\n")
                return b"".join(parts) + END
            try:  # not through a link put there since the listing
                fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:
                continue
            with open(fd, "rb") as fh:
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    parts.append(entry(b"f", 0o644, prefix + name, fh.read(OUT_LIMIT)))
    return b"".join(parts) + END


def request_sizes(line):
    """A warm request line's (spec bytes, payload bytes, timeout ms); ValueError for anything else."""
    if not line.startswith(RUN_MARK) or not line.endswith(b"\n") or len(line) > HEADER_LIMIT:
        raise ValueError(f"not a request: {line[:60]!r}")
    fields = line[len(RUN_MARK):].split()
    if len(fields) != 3 or not all(f.isdigit() for f in fields):
        raise ValueError(f"not a request: {line[:60]!r}")
    return tuple(int(f) for f in fields)


def out_frame(code, out, log):
    """The closing frame: the exit status, the packed out folder and the worker's output."""
    data = binascii.b2a_base64(out, newline=False)
    cand_log = binascii.b2a_base64(log, newline=False)
    return OUT_MARK + b"%d %d %d\n" % (code, len(data), len(cand_log)) + data + cand_log + b"\n"
