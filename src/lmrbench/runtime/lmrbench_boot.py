"""Start a run inside its sandbox: unpack the trees, start the trusted command and, for a split run, the
candidate's worker, as two users who cannot read each other's files; report the out folder at the end.

Run as ``python3 -c <this file> <spec JSON>`` with the payload tar on stdin (``trusted/repo``, ``trusted/harness``
and, for a split run, ``cand/repo``, ``cand/harness``). The spec holds ``root`` (where to unpack), ``argv`` (the
trusted command), ``worker`` (the worker's command or null), ``env``, ``deadline`` (seconds) and ``ids``:
``{"trusted": [uid, gid], "worker": [uid, gid]}`` when it runs as root (in a container), or null (the local
runner: one user, weaker). With ids, ``trusted/`` belongs to the trusted user and ``cand/`` to the worker's,
each mode 0700, and each child drops to its user before it runs anything; the only link between them is a
pair of pipes. The worker's output is kept apart from the trusted command's. At the end the worker and
everything it started are killed, and one frame goes to stdout: ``LMRBENCH-OUT <exit> <n> <m>`` then the
base64 of the out folder's tar (n bytes) and of the worker's output (m bytes). An unpack failure writes
``LMRBENCH-INFRA <why>`` instead. The boot marks itself non-dumpable: no child can open its stdout.
"""

import base64
import collections
import contextlib
import ctypes
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import threading

OUT_LIMIT = 64 << 20
LOG_LIMIT = 256_000


def _say_infra(why):
    sys.stdout.write(f"LMRBENCH-INFRA {why}\n")
    sys.stdout.flush()
    sys.exit(125)


def _own(path, ids):
    uid, gid = ids
    os.chmod(path, 0o700)  # before the chown: without CAP_FOWNER root may not chmod what it no longer owns
    for folder, dirs, files in os.walk(path):
        for name in [folder] + [os.path.join(folder, n) for n in dirs + files]:
            os.lchown(name, uid, gid)


def _dropper(ids):
    if not ids:
        return None

    def drop():
        os.setgroups([])
        os.setgid(ids[1])
        os.setuid(ids[0])
        os.umask(0o022)

    return drop


def _pump(fd, keep):
    size = 0
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        keep.append(chunk)
        size += len(chunk)
        while size > LOG_LIMIT and len(keep) > 1:
            size -= len(keep.popleft())


def _pack_out(out):
    buf, total = io.BytesIO(), 0
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(out, arcname="out", recursive=False)
        for folder, dirs, files in os.walk(out):
            for name in sorted(dirs):
                path = os.path.join(folder, name)
                if not os.path.islink(path):
                    tar.add(path, arcname="out/" + os.path.relpath(path, out), recursive=False)
            for name in sorted(files):
                path = os.path.join(folder, name)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                total += os.path.getsize(path)
                if total > OUT_LIMIT:
                    sys.stderr.write(f"[out folder over {OUT_LIMIT} bytes: {name} and later files dropped]\n")
                    return buf.getvalue()
                tar.add(path, arcname="out/" + os.path.relpath(path, out), recursive=False)
    return buf.getvalue()


def main():
    with contextlib.suppress(Exception):
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    spec = json.loads(sys.argv[1])
    root, ids = spec["root"], spec.get("ids")
    trusted, cand = os.path.join(root, "trusted"), os.path.join(root, "cand")
    try:
        with tarfile.open(fileobj=sys.stdin.buffer, mode="r|") as tar:
            if hasattr(tarfile, "fully_trusted_filter"):  # the payload is the harness's own
                tar.extraction_filter = tarfile.fully_trusted_filter
            tar.extractall(root)
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
    null = os.open(os.devnull, os.O_RDONLY)
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "VIRTUAL_ENV", "TZ")}
    base["PYTHONDONTWRITEBYTECODE"] = "1"
    env = dict(base, **spec.get("env", {}))
    env.update(
        LMRBENCH_OUT=os.path.join(trusted, "out"),
        LMRBENCH_HARNESS=os.path.join(trusted, "harness"),
        HOME=os.path.join(trusted, "home"),
        TMPDIR=os.path.join(trusted, "tmp"),
        PYTHONPATH=os.pathsep.join(p for p in (os.path.join(trusted, "harness"), env.get("PYTHONPATH", "")) if p),
    )
    worker, log, fds = None, collections.deque(), ()
    if spec.get("worker"):
        to_worker_r, to_worker_w = os.pipe()
        to_trusted_r, to_trusted_w = os.pipe()
        log_r, log_w = os.pipe()
        task_env = {k: v for k, v in spec.get("env", {}).items() if not k.startswith(("LMRBENCH_", "PYTHONPATH"))}
        wenv = dict(base, **task_env, HOME=os.path.join(cand, "home"), TMPDIR=os.path.join(cand, "tmp"),
                    PYTHONPATH=os.path.join(cand, "harness"),
                    LMRBENCH_CALL_FDS=f"{to_worker_r},{to_trusted_w}")
        try:
            worker = subprocess.Popen(spec["worker"], cwd=os.path.join(cand, "repo"), env=wenv, stdin=null,
                                      stdout=log_w, stderr=log_w, pass_fds=(to_worker_r, to_trusted_w),
                                      preexec_fn=_dropper(ids and ids["worker"]))
        except OSError as exc:
            _say_infra(f"cannot start the candidate's worker: {exc}")
        for fd in (to_worker_r, to_trusted_w, log_w):
            os.close(fd)
        threading.Thread(target=_pump, args=(log_r, log), daemon=True).start()
        env["LMRBENCH_CALL_FDS"] = f"{to_trusted_r},{to_worker_w}"
        fds = (to_trusted_r, to_worker_w)
    try:
        child = subprocess.Popen(spec["argv"], cwd=os.path.join(trusted, "repo"), env=env, stdin=null,
                                 stdout=2, stderr=2, pass_fds=fds, preexec_fn=_dropper(ids and ids["trusted"]))
    except OSError as exc:
        sys.stderr.write("cannot start {!r}: {}\n".format(spec["argv"][0], exc))
        code = 127
    else:
        for fd in fds:
            os.close(fd)
        try:  # a deadline of its own, in case the harness that started us is gone
            code = child.wait(timeout=float(spec["deadline"]))
        except subprocess.TimeoutExpired:
            child.kill()
            code = 124
        code = 128 - code if code < 0 else code
    if worker is not None:
        if os.getpid() == 1:
            os.kill(-1, signal.SIGKILL)  # the worker and anything it started (PID 1 itself is spared)
        else:
            worker.kill()
        worker.wait()
    try:
        data = base64.b64encode(_pack_out(os.path.join(trusted, "out")))
    except Exception as exc:
        sys.stderr.write(f"cannot pack the out folder: {exc}\n")
        data = b""
    cand_log = base64.b64encode(b"".join(log))
    sys.stdout.buffer.write(b"LMRBENCH-OUT %d %d %d\n" % (code, len(data), len(cand_log)) + data + cand_log + b"\n")
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
