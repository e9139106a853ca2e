"""Landlock for the process that runs a candidate's code (see ``lmrbench_boot``): writes only beneath its own
folder, no signals or traces outside its domain, and reads everywhere but the hidden paths. Shipped as a part of
the boot's ``-c`` source (``runtime.boot_source``); importable alone by tests. Standard library only, and no
``from __future__``: the parts are joined into one program.
"""

import ctypes
import os
import stat

_LL_WRITE = (1 << 1) | (0b111111111 << 4)  # WRITE_FILE, REMOVE_DIR/FILE, MAKE_CHAR..MAKE_SYM
_LL_READ = (1 << 2) | (1 << 3)  # READ_FILE, READ_DIR
_LL_FILE = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 14)  # the rights a rule on a file (not a folder) may hold


def _landlock_abi(libc):
    try:
        return max(0, libc.syscall(444, None, 0, 1))  # landlock_create_ruleset(NULL, 0, VERSION)
    except Exception:
        return 0


def _allowed_reads(hide):
    """Folders and files whose subtrees together are everything but the ``hide`` subtrees: at each folder on
    the way from / to a hidden path, every entry not on such a way."""
    hide = [os.path.realpath(h) for h in hide]
    ways = set()
    for h in hide:
        cur = h
        while True:
            ways.add(cur)
            parent = os.path.dirname(cur)
            if parent == cur:
                break
            cur = parent
    out = []
    for folder in sorted(ways):
        if folder in hide:
            continue
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            if path not in ways and not os.path.islink(path):  # a rule on a link would hold its target
                out.append(path)
    return out


def _confine(own, hide):
    """Landlock this process: writes only beneath ``own`` (and to existing files under /dev), no signals or
    traces outside, and with ``hide`` given, reads everywhere but there. False when the kernel has none."""
    libc = ctypes.CDLL(None, use_errno=True)
    abi = _landlock_abi(libc)
    if abi < 1:
        return False
    write = _LL_WRITE | ((1 << 13) if abi >= 2 else 0) | ((1 << 14) if abi >= 3 else 0)
    handled = write | (_LL_READ if hide is not None else 0)
    scoped = 0b11 if abi >= 6 else 0  # abstract unix sockets, signals
    attr = ctypes.create_string_buffer(24)
    ctypes.memmove(attr, handled.to_bytes(8, "little") + bytes(8) + scoped.to_bytes(8, "little"), 24)
    fd = libc.syscall(444, attr, 24 if abi >= 6 else 8, 0)
    if fd < 0:
        return False

    def allow(path, access):
        try:
            pfd = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            return
        try:
            if not stat.S_ISDIR(os.fstat(pfd).st_mode):
                access &= _LL_FILE
            rule = access.to_bytes(8, "little") + pfd.to_bytes(4, "little", signed=True)
            libc.syscall(445, fd, 1, ctypes.create_string_buffer(rule, 12), 0)
        finally:
            os.close(pfd)

    allow(own, handled)
    allow("/dev", (1 << 1) | ((1 << 14) if abi >= 3 else 0) | (_LL_READ if hide is not None else 0))
    if hide is not None:
        for path in _allowed_reads(hide):
            if path != "/dev":
                allow(path, _LL_READ)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    ok = libc.syscall(446, fd, 0) == 0
    os.close(fd)
    return ok
