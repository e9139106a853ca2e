"""The boot's half of the payload format (see ``lmrbench_boot``): unpack the trees it is sent, pack the out folder
it sends back. Shipped as a part of the boot's ``-c`` source, after the protocol module and before the boot
(``runtime.boot_source``); importable alone by tests. Standard library only, and no ``from __future__``: the
parts are joined into one program.
"""

import os
import stat
import sys

if __name__ != "__main__":  # imported by a test; as a part of the boot, the protocol's source ran first
    from lmrbench_protocol import END, OUT_LIMIT

CHUNK = 1 << 20


def _safe_name(name):
    parts = name.split("/")
    if name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"unsafe name in the payload: {name!r}")
    return os.path.join(*parts)


def _unpack(stream, root):
    """Write the payload's entries under ``root``; the payload is the harness's own."""
    while True:
        header = stream.readline(256)
        if header == END:
            return
        kind, mode, n, size = header.split()
        mode, n, size = int(mode, 8) & 0o7777, int(n), int(size)
        path = os.path.join(root, _safe_name(stream.read(n).decode("utf-8", "surrogateescape")))
        os.makedirs(os.path.dirname(path), 0o700, exist_ok=True)
        if kind == b"d":
            os.makedirs(path, 0o700, exist_ok=True)
            os.chmod(path, mode | 0o700)
        elif kind == b"l":
            os.symlink(stream.read(size), path.encode("utf-8", "surrogateescape"))
        elif kind == b"f":
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode | 0o600)
            try:
                while size:
                    chunk = stream.read(min(size, CHUNK))
                    if not chunk:
                        raise EOFError("the payload ends inside a file")
                    os.write(fd, chunk)
                    size -= len(chunk)
            finally:
                os.close(fd)
        else:
            raise ValueError(f"unknown entry in the payload: {header!r}")


def _entry(kind, mode, name, data):
    raw = name.encode("utf-8", "surrogateescape")
    return b"%s %o %d %d\n" % (kind, mode, len(raw), len(data)) + raw + data


def _pack_out(out):
    """The out folder's folders and regular files (no links), at most OUT_LIMIT bytes of files."""
    parts, total = [_entry(b"d", 0o755, "out", b"")], 0
    for folder, dirs, files in os.walk(out):
        dirs.sort()
        rel = os.path.relpath(folder, out)
        prefix = "out/" if rel == "." else "out/" + rel.replace(os.sep, "/") + "/"
        for name in dirs:
            if not os.path.islink(os.path.join(folder, name)):
                parts.append(_entry(b"d", 0o755, prefix + name, b""))
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
                    parts.append(_entry(b"f", 0o644, prefix + name, fh.read(OUT_LIMIT)))
    return b"".join(parts) + END
