"""Start a run inside its sandbox: unpack the trees, start the trusted command and, for a split run, the
candidate's worker, as two users who cannot read each other's files; report the out folder at the end.

Run as ``python3 -I -S -c <this file> <spec>`` with the payload on stdin (``trusted/repo``, ``trusted/harness``
and, for a split run, ``cand/repo``, ``cand/harness``). The spec is the hex of a ``marshal`` dump of a dict:
``root`` (where to unpack), ``argv`` (the trusted command), ``worker`` (the worker's command or None),
``env``, ``deadline`` (seconds) and ``ids``: ``{"trusted": [uid, gid], "worker": [uid, gid]}`` when it runs as
root (in a container), or None (the local runner: one user, weaker). With ids, ``trusted/`` belongs to the
trusted user and ``cand/`` to the worker's, each mode 0700, and each child drops to its user before it runs
anything; the only link between them is a pair of pipes. The worker's output is kept apart from the trusted
command's. At the end the worker and everything it started are killed, and one frame goes to stdout:
``LMRBENCH-OUT <exit> <n> <m>`` then the base64 of the out folder (n bytes, in the payload's format) and of
the worker's output (m bytes). An unpack failure writes ``LMRBENCH-INFRA <why>`` instead. The boot marks
itself non-dumpable: no child can open its stdout.

With ids and ``below`` in the spec (a boot started beside other processes of its container, e.g. by ``docker
exec`` in a Harbor verifier), the boot is a child subreaper and ends only the processes below it, never every
process it may signal.

Without ids (the local runner) the spec may hold ``confine``: ``{"reads": [paths]}``. The boot is then a child
subreaper, so that every process a run starts (a ``setsid`` daemon too) stays below it, and at the end it
kills them all before the frame is written. The process that runs the candidate's code (the worker, or the
command itself when there is none) is confined with Landlock where the kernel has it: it writes only beneath
its own folder (``cand/`` or ``trusted/``; existing files under /dev too) and cannot signal or trace a
process outside its domain; the worker reads only its own folder, /dev and the paths in ``reads`` (an
allow-list: the environment's interpreter, standard library and packages, the system's shared libraries), so
neither ``trusted/`` nor any recorded case elsewhere on the machine is readable from it. Without Landlock the
boot says so on stderr.

The payload and the out folder share one format (``lmrbench_frames``, shipped before this file).

The boot imports only what the interpreter has built in, ``os`` and ``ctypes``: it runs before every test
run, in a container whose files may sit on a slow filesystem, and the standard library's tar, subprocess
and json modules cost it about 40 ms there.

A zygote: with ``preload`` in the spec (modules of the image, e.g. ``["torch", "transformers.models.llama"]``; the
boot then runs without ``-S``, so that ``sys.path`` holds the interpreter's own folders and site-packages, never
the working folder nor a tree), the boot imports those modules once, with the environment the two sides share,
before it reads anything from stdin, and each side that is a ``python -m``/``python -c`` command is a fork of it
that runs its entry in-process (``sys.argv``, ``os.environ``, ``sys.path`` from ``PYTHONPATH``, the working folder,
``sys.dont_write_bytecode``, stdio, fds, user, umask and Landlock as an exec'd interpreter would have them) instead
of paying the import again. The worker is forked before the payload is read, drops to its user at once and blocks
on a pipe until ``cand/`` is unpacked and owned: its memory never held a byte of the trusted tree. A module that
fails to import is left out (the side that imports it gets the real error). Variables that act only when an
interpreter starts (``PYTHON*`` besides ``PYTHONPATH``, ``PYTHONDONTWRITEBYTECODE`` and ``PYTHONUNBUFFERED``;
``LD_*``, ``MALLOC_*``, the locale and ``TZ`` unless they are the boot's own) turn the zygote off for the run; so
does any other command (it is exec'd). What a fork cannot give: ``sys.flags`` are the boot's (``-I``), and values a
preloaded module computed from ``HOME`` or ``TMPDIR`` at import are the boot's.

Warm (``serve`` in the spec: ``{"nonce", "idle"}``): the boot serves runs of trusted code (a task's golden,
masked and mutant code, never a candidate's) one after another, so that a validation pays for one container and
one import of the preloaded modules instead of one per run. It imports ``preload`` once, then reads requests on
stdin: a ``RUN_MARK`` line ``<spec bytes> <payload bytes> <timeout ms>``, the run's spec (as above, its own
``root`` each) and its payload. Each run is a fork of the warm boot that reads its payload from a pipe the warm
boot fills (so the warm boot's memory never holds a tree) and runs as a cold boot would; after it, every other
process is ended, and in a container the run's folder and whatever it left in /tmp and /dev/shm are removed.
Then ``ENDED_MARK <nonce> <n>`` goes to stderr and ``DONE_MARK <nonce> <n> <exit> <timed out>`` to stdout, after
the run's own frame. A run past its timeout is killed (exit 124, timed out 1). EOF on stdin, or no request for
``idle`` seconds, ends the warm boot.
"""

import _signal
import _thread
import ctypes
import marshal
import os
import stat
import sys

if __name__ != "__main__":  # imported by a test; as the boot (``-c``), the protocol's source ran first
    from lmrbench_frames import CHUNK, out_frame, pack_out, request_sizes, unpack_tree
    from lmrbench_protocol import (
        DONE_MARK,
        ENDED_MARK,
        ENV_CALL_FDS,
        ENV_EDITABLE,
        ENV_HARNESS,
        ENV_OUT,
        ENV_PREFIX,
        INFRA_MARK,
    )

LOG_LIMIT = 256_000


def _say_infra(why):
    sys.stdout.write(f"{INFRA_MARK.decode()}{why}\n")
    sys.stdout.flush()
    sys.exit(125)


def _own(path, ids):
    uid, gid = ids
    os.chmod(path, 0o700)  # before the chown: without CAP_FOWNER root may not chmod what it no longer owns
    for folder, dirs, files in os.walk(path):
        for name in [folder] + [os.path.join(folder, n) for n in dirs + files]:
            os.lchown(name, uid, gid)


_LL_WRITE = (1 << 1) | (0b111111111 << 4)  # WRITE_FILE, REMOVE_DIR/FILE, MAKE_CHAR..MAKE_SYM
_LL_READ = (1 << 2) | (1 << 3)  # READ_FILE, READ_DIR
_LL_FILE = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 14)  # the rights a rule on a file (not a folder) may hold


def _landlock_abi(libc):
    try:
        return max(0, libc.syscall(444, None, 0, 1))  # landlock_create_ruleset(NULL, 0, VERSION)
    except Exception:
        return 0


def _confine(own, reads):
    """Landlock this process: writes only beneath ``own`` (and to existing files under /dev), no signals or
    traces outside, and with ``reads`` given, reads only beneath ``own``, /dev and those paths. False when the
    kernel has none."""
    libc = ctypes.CDLL(None, use_errno=True)
    abi = _landlock_abi(libc)
    if abi < 1:
        return False
    write = _LL_WRITE | ((1 << 13) if abi >= 2 else 0) | ((1 << 14) if abi >= 3 else 0)
    handled = write | (_LL_READ if reads is not None else 0)
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
    allow("/dev", (1 << 1) | ((1 << 14) if abi >= 3 else 0) | (_LL_READ if reads is not None else 0))
    for path in reads or ():
        if os.path.realpath(path) != "/dev":
            allow(os.path.realpath(path), _LL_READ)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    ok = libc.syscall(446, fd, 0) == 0
    os.close(fd)
    return ok


def _descendants(me):
    """Pids of every process below ``me`` (from /proc)."""
    parent = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        parent[int(name)] = int(data[data.rindex(b")") + 2 :].split()[1])
    found, todo = set(), [me]
    while todo:
        cur = todo.pop()
        for pid, ppid in parent.items():
            if ppid == cur and pid not in found:
                found.add(pid)
                todo.append(pid)
    return found


def _end_everything(limit=30):
    """Kill every process below the boot (a subreaper: orphans and daemons are below it too) and reap them.

    A killed process can take a while to be gone on a loaded machine (its memory is torn down first), so after
    each round of kills the boot blocks until a child of its own ends, ``limit`` seconds at most in all (the
    alarm interrupts the wait); False when processes were still there then."""
    me = os.getpid()
    _signal.signal(_signal.SIGALRM, _on_alarm)
    _signal.alarm(limit)
    try:
        while True:
            left = _descendants(me)
            if not left:
                return True
            for pid in left:
                try:  # noqa: SIM105 (contextlib is not imported here)
                    os.kill(pid, 9)
                except OSError:
                    pass
            try:  # noqa: SIM105 (contextlib is not imported here)
                os.waitpid(-1, 0)  # a killed child, or an orphan the kills made ours
            except ChildProcessError:
                pass  # none of ours yet: the ones left are grandchildren whose parents are going
            while True:
                try:
                    pid, _ = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    pid = 0
                if pid == 0:
                    break
    except _Deadline:
        return False
    finally:
        _signal.alarm(0)


def _on_term(signum, frame):
    _end_everything()
    os._exit(124)


def _spawn(argv, cwd, env, ids, stdout, stderr, keep, confine=None):
    """Start ``argv`` as a child (dropped to ``ids`` when given) with stdin from /dev/null and only the fds in
    ``keep`` besides 0-2; raise OSError in the parent when it cannot start."""
    err_r, err_w = os.pipe()  # close-on-exec: stays empty when the exec succeeds
    null = os.open(os.devnull, os.O_RDONLY)
    pid = os.fork()
    if pid == 0:
        try:
            os.close(err_r)
            for signum in (_signal.SIGPIPE, getattr(_signal, "SIGXFSZ", None)):
                if signum is not None:
                    _signal.signal(signum, _signal.SIG_DFL)
            # stdout and stderr first: ``stdout`` may be 2 itself
            for target, fd in ((1, stdout), (2, stderr), (0, null)):
                os.dup2(fd, target)
            keep = sorted(set(keep) | {err_w})
            low = 3
            for fd in keep:
                os.closerange(low, fd)
                os.set_inheritable(fd, fd != err_w)
                low = fd + 1
            os.closerange(low, 1 << 16)
            os.chdir(cwd)
            if confine is not None and not _confine(*confine):
                os.write(2, b"[lmrbench: no Landlock in this kernel: the run's writes are not confined]\n")
            if ids:
                os.setgroups([])
                os.setgid(ids[1])
                os.setuid(ids[0])
                os.umask(0o022)
            os.execvpe(argv[0], argv, env)
        except BaseException as exc:
            try:
                os.write(err_w, f"{type(exc).__name__}: {exc}".encode("utf-8", "replace"))
            finally:
                os._exit(127)
    os.close(err_w)
    os.close(null)
    return _started(pid, err_r)


# --- the zygote (see the module docstring) ---

_EMULATED = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")
_AT_START = ("LD_", "MALLOC_", "GLIBC_TUNABLES", "LANG", "LC_", "TZ")


def _python_entry(argv):
    """``(flag, target, args)`` of a ``python -m MODULE ...`` or ``python -c CODE ...`` command, which a fork of
    the zygote runs in-process; None for any other command (it is exec'd)."""
    if len(argv) >= 3 and os.path.basename(argv[0]) in ("python", "python3") and argv[1] in ("-m", "-c"):
        return argv[1], argv[2], list(argv[3:])
    return None


def _forkable(envs):
    """False when a variable of the sides' environments acts only as an interpreter or the C library starts,
    which a fork of the boot could not honour."""
    for env in envs:
        for key, value in env.items():
            if key.startswith("PYTHON") and key not in _EMULATED:
                return False
            if key.startswith(_AT_START) and os.environ.get(key) != value:
                return False
    return True


_FAILED = set()  # type: set[str]


def _preload(names, env):
    """Import the modules ``names`` (``torch``, ``transformers.models.llama``) with ``env`` as the environment
    (what both sides share), before the payload is read: nothing of a tree is on disk yet, and ``sys.path`` holds
    the interpreter's folders only. The import reads /dev/null as stdin and writes to stderr, never to stdout. A
    module that fails is dropped with whatever it imported, so that the side that imports it gets the real error."""
    os.environ.clear()
    os.environ.update(env)
    saved = (os.dup(0), os.dup(1))
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    try:
        for name in names:
            if not isinstance(name, str) or not all(p.isidentifier() for p in name.split(".")) \
                    or name in sys.modules or name in _FAILED:
                continue
            before = set(sys.modules)
            try:
                __import__(name)
            except (Exception, SystemExit):
                _FAILED.add(name)  # a warm boot's runs do not try it again
                _drop(set(sys.modules) - before)
        import io  # noqa: F401 (what a fork needs to become its side's interpreter)
        import runpy  # noqa: F401
    finally:
        try:  # noqa: SIM105
            sys.stdout.flush()
        except Exception:
            pass
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        for fd in (*saved, null):
            os.close(fd)
    import gc

    gc.freeze()  # the forks' collections skip what the boot imported (fewer pages copied, less work)


def _drop(added):
    """Take the modules ``added`` out of ``sys.modules``, and off the packages that stay."""
    for name in added:
        module = sys.modules.pop(name, None)
        parent, _, child = name.rpartition(".")
        owner = getattr(sys.modules.get(parent), "__dict__", {})
        if module is not None and owner.get(child) is module:
            del owner[child]


class _Become(BaseException):
    """Raised in a forked side: it unwinds the boot's frames (no handler of the boot catches it), and the
    module's last lines run the side's entry (``run``)."""

    def __init__(self, argv, entry, env):
        super().__init__()
        self.argv, self.entry, self.env = argv, entry, env

    def run(self):
        """Become the interpreter the side's command would have started, and run its entry. Its SystemExit or
        exception reaches the interpreter as an exec'd one's would."""
        import io
        import runpy

        flag, target, args = self.entry
        os.environ.clear()
        os.environ.update(self.env)
        sys.dont_write_bytecode = bool(self.env.get("PYTHONDONTWRITEBYTECODE"))
        sys.orig_argv = list(self.argv)
        sys.argv = [flag, *args]
        extra = [p for p in self.env.get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[:0] = [os.getcwd() if flag == "-m" else "", *extra]
        unbuffered = bool(self.env.get("PYTHONUNBUFFERED"))

        encoding = sys.__stdout__.encoding if sys.__stdout__ else "utf-8"

        def stream(fd, name, mode, errors, line):
            raw = io.FileIO(fd, mode, closefd=False)
            raw.name = f"<{name}>"
            direct = unbuffered and mode == "w"  # -u: no buffer under the text layer
            buf = raw if direct else (io.BufferedWriter if mode == "w" else io.BufferedReader)(raw)
            return io.TextIOWrapper(buf, encoding, errors, line_buffering=line, write_through=direct)

        for fd, name, mode, errors in ((0, "stdin", "r", "strict"), (1, "stdout", "w", "strict"),
                                       (2, "stderr", "w", "backslashreplace")):
            if name != "stderr" and getattr(sys, name) is not None:
                errors = getattr(sys, name).errors  # the locale's (surrogateescape under C/POSIX)
            text = stream(fd, name, mode, errors, fd == 2 or (fd == 1 and os.isatty(1)))
            setattr(sys, name, text)
            setattr(sys, f"__{name}__", text)
        if "tempfile" in sys.modules:
            sys.modules["tempfile"].tempdir = None  # found again from TMPDIR, the side's own
        if "numpy.random" in sys.modules:  # fresh entropy, as each exec'd interpreter draws its own
            try:  # noqa: SIM105
                sys.modules["numpy.random"].seed()
            except Exception:
                pass
        import importlib

        importlib.invalidate_caches()
        main = type(sys)("__main__")
        main.__builtins__ = __builtins__
        sys.modules["__main__"] = main
        if flag == "-m":
            runpy._run_module_as_main(target)
        else:
            exec(compile(target, "<string>", "exec"), main.__dict__)


def _fork(argv, entry, cwd, env, ids, stdout, stderr, keep, confine=None, go=None):
    """Start a side as a fork of the zygote: ``_spawn``'s fds, user, umask and Landlock, then ``_Become`` in the
    child. With ``go`` (a pipe's read end) the child drops to its user at once and waits until a byte arrives
    there before it goes to ``cwd`` (EOF: the run ended before it began; it exits). Returns ``(pid, err_r)``:
    ``_started`` says whether the child got as far as its entry."""
    err_r, err_w = os.pipe()
    null = os.open(os.devnull, os.O_RDONLY)
    pid = os.fork()
    if pid == 0:
        try:
            os.close(err_r)
            for signum in (_signal.SIGTERM, _signal.SIGALRM):
                _signal.signal(signum, _signal.SIG_DFL)
            for target, fd in ((1, stdout), (2, stderr), (0, null)):
                os.dup2(fd, target)
            low = 3
            for fd in sorted(set(keep) | {err_w} | ({go} if go is not None else set())):
                os.closerange(low, fd)
                low = fd + 1
            os.closerange(low, 1 << 16)
            for fd in keep:
                os.set_inheritable(fd, True)  # as an exec'd side has them: its own children may inherit them
            if ids:
                os.setgroups([])
                os.setgid(ids[1])
                os.setuid(ids[0])
                os.umask(0o022)
            ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE 1, as after an exec
            if go is not None:
                got = os.read(go, 1)
                os.close(go)
                if not got:
                    os._exit(0)
            os.chdir(cwd)
            if confine is not None and not _confine(*confine):
                os.write(2, b"[lmrbench: no Landlock in this kernel: the run's writes are not confined]\n")
            os.close(err_w)
        except BaseException as exc:
            try:
                os.write(err_w, f"{type(exc).__name__}: {exc}".encode("utf-8", "replace"))
            finally:
                os._exit(127)
        raise _Become(argv, entry, env)
    os.close(err_w)
    os.close(null)
    return pid, err_r


def _started(pid, err_r):
    """Wait until a forked side reached its entry; raise OSError with its reason when it could not."""
    why = b""
    while True:
        chunk = os.read(err_r, 4096)
        if not chunk:
            break
        why += chunk
    os.close(err_r)
    if why:
        os.waitpid(pid, 0)
        raise OSError(why.decode("utf-8", "replace"))
    return pid


class _Deadline(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Deadline


def _exit_code(status):
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else 255


def _wait(pid, deadline):
    """The child's exit status; killed (124) when it runs past ``deadline`` seconds. A blocking wait that
    the alarm interrupts: it returns as soon as the child ends."""
    _signal.signal(_signal.SIGALRM, _on_alarm)
    _signal.alarm(max(1, int(deadline)))
    try:
        try:
            status = os.waitpid(pid, 0)[1]
        finally:
            _signal.alarm(0)
    except _Deadline:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        return 124
    return _exit_code(status)


def _pump(fd, keep, done):
    size = 0
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            keep.append(chunk)
            size += len(chunk)
            while size > LOG_LIMIT and len(keep) > 1:
                size -= len(keep.pop(0))
    finally:
        done.release()


def main():
    try:  # noqa: SIM105 (contextlib is not imported here)
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    except Exception:
        pass
    spec = marshal.loads(bytes.fromhex(sys.argv[1]))
    if spec.get("serve"):
        return _serve(spec)
    return _run(spec, sys.stdin.buffer)


def _base_env():
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "VIRTUAL_ENV", "TZ", ENV_EDITABLE)}
    base["PYTHONDONTWRITEBYTECODE"] = "1"
    return base


def _run(spec, stdin):
    """One run (see the module docstring): unpack ``stdin``'s payload, start the sides, wait, write the frame;
    the trusted command's exit status."""
    root, ids = spec["root"], spec.get("ids")
    confine = spec.get("confine") if not ids else None
    below = bool(ids and spec.get("below"))  # not alone in its container: end only what runs below it
    if confine is not None or below:
        try:  # noqa: SIM105
            ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: daemons stay below the boot
        except Exception:
            pass
        _signal.signal(_signal.SIGTERM, _on_term)  # the runner's timeout: end the run's processes, then exit
    trusted, cand = os.path.join(root, "trusted"), os.path.join(root, "cand")
    base = _base_env()
    env = dict(base, **spec.get("env", {}))
    env.update({ENV_OUT: os.path.join(trusted, "out"), ENV_HARNESS: os.path.join(trusted, "harness")})
    env.update(
        HOME=os.path.join(trusted, "home"),
        TMPDIR=os.path.join(trusted, "tmp"),
        PYTHONPATH=os.pathsep.join(p for p in (os.path.join(trusted, "harness"), env.get("PYTHONPATH", "")) if p),
    )
    task_env = {k: v for k, v in spec.get("env", {}).items() if not k.startswith((ENV_PREFIX, "PYTHONPATH"))}
    worker, log, fds, log_r, wenv, wentry = None, [], (), None, None, None
    if spec.get("worker"):
        to_worker_r, to_worker_w = os.pipe()
        to_trusted_r, to_trusted_w = os.pipe()
        log_r, log_w = os.pipe()
        wenv = dict(base, **task_env, HOME=os.path.join(cand, "home"), TMPDIR=os.path.join(cand, "tmp"),
                    PYTHONPATH=os.path.join(cand, "harness"))
        wenv[ENV_CALL_FDS] = f"{to_worker_r},{to_trusted_w}"
        env[ENV_CALL_FDS] = f"{to_trusted_r},{to_worker_w}"
        fds = (to_trusted_r, to_worker_w)
        wargs = (spec["worker"], os.path.join(cand, "repo"), wenv, ids and ids["worker"], log_w, log_w,
                 (to_worker_r, to_trusted_w), None if confine is None else (cand, list(confine.get("reads", []))))
    zygote = bool(spec.get("preload")) and _forkable([env, wenv or {}])
    if zygote:
        _preload(spec["preload"], dict(base, **task_env))
        wentry = _python_entry(spec["worker"]) if spec.get("worker") else None
    if wentry:  # forked before the payload is read: its memory holds nothing of the trusted tree
        go_r, go_w = os.pipe()
        wpid, werr = _fork(wargs[0], wentry, *wargs[1:], go=go_r)
        os.close(go_r)
    try:
        unpack_tree(stdin, root)
        for d in ("out", "tmp", "home"):
            os.makedirs(os.path.join(trusted, d), exist_ok=True)
        if spec.get("worker"):
            for d in ("tmp", "home"):
                os.makedirs(os.path.join(cand, d), exist_ok=True)
        if ids:
            os.chmod(root, 0o711)
            _own(trusted, ids["trusted"])
            if spec.get("worker"):
                _own(cand, ids["worker"])
    except Exception as exc:
        _say_infra(f"cannot unpack the tree: {type(exc).__name__}: {exc}")
    if spec.get("worker"):
        try:
            if wentry:
                try:  # noqa: SIM105
                    os.write(go_w, b"1")  # cand/ is there and the worker's: it may go
                except OSError:
                    pass  # it ended already; _started says why
                os.close(go_w)
                worker = _started(wpid, werr)
            else:
                worker = _spawn(*wargs)
        except OSError as exc:
            _say_infra(f"cannot start the candidate's worker: {exc}")
        for fd in (to_worker_r, to_trusted_w, log_w):
            os.close(fd)
    tentry = _python_entry(spec["argv"]) if zygote else None
    targs = (os.path.join(trusted, "repo"), env, ids and ids["trusted"], 2, 2, fds,
             None if confine is None or worker is not None else (trusted, None))
    try:
        child = _started(*_fork(spec["argv"], tentry, *targs)) if tentry else _spawn(spec["argv"], *targs)
    except OSError as exc:
        sys.stderr.write("cannot start {!r}: {}\n".format(spec["argv"][0], exc))
        child = None
    for fd in fds:
        os.close(fd)
    done = _thread.allocate_lock()
    if log_r is not None:
        done.acquire()
        # the pump thread blocks the alarm, so that the kernel delivers it to the main thread's wait
        _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGALRM, _signal.SIGTERM})
        _thread.start_new_thread(_pump, (log_r, log, done))
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, {_signal.SIGALRM, _signal.SIGTERM})
    # a deadline of its own, in case the harness that started us is gone
    code = 127 if child is None else _wait(child, float(spec["deadline"]))
    if confine is not None or below:
        if not _end_everything():
            sys.stderr.write("[lmrbench: processes of the run were still there 30 s after they were killed]\n")
            code = 125
        if worker is not None:
            done.acquire(timeout=1)  # every writer of the worker's log is gone
    elif worker is not None:
        if ids:  # a container: the worker and anything it started (PID 1, a warm boot or this one, is spared)
            os.kill(-1, 9)
        else:
            os.kill(worker, 9)
        os.waitpid(worker, 0)
        done.acquire(timeout=1)  # the rest of its output (every writer is gone in a container)
    try:
        out = pack_out(os.path.join(trusted, "out"))
    except Exception as exc:
        sys.stderr.write(f"cannot pack the out folder: {exc}\n")
        out = b""
    sys.stdout.buffer.write(out_frame(code, out, b"".join(log)))
    sys.stdout.flush()
    return code


# --- warm: runs served one after another (see the module docstring) ---


def _read_exact(fd, size):
    data = b""
    while len(data) < size:
        chunk = os.read(fd, min(size - len(data), CHUNK))
        if not chunk:
            raise EOFError("the request ends early")
        data += chunk
    return data


def _read_request(idle):
    """The next request's (run spec, payload size, timeout seconds); None at EOF or after ``idle`` seconds."""
    _signal.signal(_signal.SIGALRM, _on_alarm)
    _signal.setitimer(_signal.ITIMER_REAL, idle)
    line = b""
    try:
        while not line.endswith(b"\n"):
            byte = os.read(0, 1)  # one byte at a time: nothing of the payload may be read ahead here
            if not byte:
                return None
            line += byte
    except _Deadline:
        return None
    finally:
        _signal.setitimer(_signal.ITIMER_REAL, 0)
    spec_size, size, timeout_ms = request_sizes(line)
    return marshal.loads(_read_exact(0, spec_size)), size, timeout_ms / 1000


def _copy_in(size, fd):
    """Move ``size`` bytes of stdin to ``fd`` (a pipe to the run), all of them read even when the run stopped
    reading: the next request starts right after."""
    while size:
        chunk = os.read(0, min(size, CHUNK))
        if not chunk:
            raise EOFError("the payload ends early")
        size -= len(chunk)
        if fd is not None:
            try:
                os.write(fd, chunk)
            except OSError:  # the run ended or stopped reading; the rest is drained
                os.close(fd)
                fd = None
    if fd is not None:
        os.close(fd)


def _take_away(path):
    """Remove ``path`` whoever owns it: a container's root keeps CAP_CHOWN but neither CAP_DAC_OVERRIDE nor
    CAP_FOWNER, so each entry is made root's before it goes."""
    try:
        st = os.lstat(path)
        os.lchown(path, 0, 0)
        if stat.S_ISDIR(st.st_mode):
            os.chmod(path, 0o700)
            for name in os.listdir(path):
                _take_away(os.path.join(path, name))
            os.rmdir(path)
        else:
            os.unlink(path)
    except OSError:
        pass


def _serve_one(spec, size, timeout):
    """Fork the run, feed it its payload, wait for it (killed at ``timeout``); its (exit status, timed out)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the run: a cold boot's life, with the payload from the pipe
        os.close(w)
        null = os.open(os.devnull, os.O_RDONLY)  # fd 0 stays taken: the run's pipes must not land on it
        os.dup2(null, 0)
        os.close(null)
        try:
            code = _run(spec, open(r, "rb", buffering=CHUNK))  # noqa: SIM115 (the run's whole life)
        except SystemExit as exc:  # _say_infra, or a run that could not start
            code = exc.code if isinstance(exc.code, int) else 1
        for stream in (sys.stdout, sys.stderr):
            try:  # noqa: SIM105
                stream.flush()
            except Exception:
                pass
        os._exit(code)
    os.close(r)
    start = os.times().elapsed
    _copy_in(size, w)  # not under the alarm: a copy cut short would leave the next request's bytes misread
    _signal.signal(_signal.SIGALRM, _on_alarm)
    _signal.setitimer(_signal.ITIMER_REAL, max(0.01, timeout - (os.times().elapsed - start)))
    try:
        try:
            return _exit_code(os.waitpid(pid, 0)[1]), 0
        finally:
            _signal.setitimer(_signal.ITIMER_REAL, 0)
    except _Deadline:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        return 124, 1


def _serve(spec):
    """Serve runs until EOF or ``idle`` seconds without a request (see the module docstring)."""
    serve, ids = spec["serve"], spec.get("ids")
    nonce, idle = serve["nonce"].encode(), float(serve["idle"])
    try:  # noqa: SIM105
        ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: what a run leaves stays below
    except Exception:
        pass
    _signal.signal(_signal.SIGTERM, _on_term)  # the host ends the session: every process, then exit
    if spec.get("preload"):
        _preload(spec["preload"], dict(_base_env(), **spec.get("env", {})))
    n = 0
    while True:
        request = _read_request(idle)
        if request is None:
            return 0
        run_spec, size, timeout = request
        n += 1
        code, timed_out = _serve_one(run_spec, size, timeout)
        _end_everything()
        if ids:  # the container's writable places hold nothing of this run for the next
            _take_away(run_spec["root"])
            for folder in ("/tmp", "/dev/shm"):
                try:
                    names = os.listdir(folder)
                except OSError:
                    continue
                for name in names:
                    _take_away(os.path.join(folder, name))
        os.write(2, b"\n%s%s %d\n" % (ENDED_MARK, nonce, n))
        os.write(1, b"%s%s %d %d %d\n" % (DONE_MARK, nonce, n, code, timed_out))


if __name__ == "__main__":
    _side = None
    try:
        _code = main()
    except _Become as exc:  # a forked side: the boot's frames are gone; its entry runs at the top level
        _side = exc
    if _side is not None:
        _side.__traceback__ = None
        _side.run()
        _code = 0
    sys.exit(_code)
