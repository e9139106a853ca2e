"""Host-side wheelhouses: a task's requirements downloaded once by the host's pip, installed offline in
images.

Why: an image build may have no usable network at all (air-gapped labs), and where it has one, TLS may be
intercepted by a certificate authority that the host trusts but a fresh container does not (pip then fails
with CERTIFICATE_VERIFY_FAILED). The host's pip downloads wheels for the image's Python and platform into
``<cache>/wheels/<hash>``; the image installs them with ``pip install --no-index --find-links``. The same
folder serves air-gapped users who copy it over. The local runner uses a wheelhouse for the host's own
Python.
"""

from __future__ import annotations

import hashlib
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from lmrbench.defaults import cache_root
from lmrbench.errors import LmrError
from lmrbench.fsutil import staging_dir
from lmrbench.progress import NullProgress, Progress, check_cancel
from lmrbench.subprocess_progress import run_with_heartbeat

HARNESS_REQUIREMENTS = ["pytest"]
"""What every environment gets besides the task's own requirements (the test runner)."""


@dataclass(frozen=True)
class WheelTarget:
    """The interpreter and platform a wheelhouse is for. ``python == ""`` means the host's own."""

    python: str = ""
    """Major.minor, e.g. "3.11"; empty for the host interpreter."""
    glibc: str = ""
    """glibc version of the target, e.g. "2.36" (manylinux tags up to it are accepted)."""
    machine: str = "x86_64"
    """CPU architecture."""

    @property
    def key(self) -> str:
        """A stable text identifying the target (part of cache keys)."""
        return f"py{self.python or 'host'}-glibc{self.glibc or 'host'}-{self.machine}"

    def pip_args(self) -> list[str]:
        """pip download options selecting wheels for this target (none for the host)."""
        if not self.python:
            return []
        glibc = (self.glibc or "2.17").replace(".", "_")
        abi = "cp" + self.python.replace(".", "")
        return [
            "--python-version",
            self.python,
            "--implementation",
            "cp",
            "--abi",
            abi,
            "--abi",
            "abi3",
            "--abi",
            "none",
            "--platform",
            f"manylinux_{glibc}_{self.machine}",
            "--only-binary=:all:",
        ]


HOST = WheelTarget()


def requirement_lines(text: str) -> list[str]:
    """The requirement lines of a requirements file: comments, blanks and pip options dropped, order kept."""
    out = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            raise LmrError(
                f"pip option {line.split()[0]!r} is not supported in a task's requirements; "
                "list plain requirements, one a line"
            )
        out.append(line)
    return out


def requirements_hash(lines: list[str], target: WheelTarget = HOST) -> str:
    """A short hash of the requirements (with the harness's own) and the target."""
    text = "\n".join([*lines, *HARNESS_REQUIREMENTS, target.key])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _pip(args: list[str], what: str, progress: Progress, cancel: threading.Event | None = None) -> None:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    progress.log("$ " + " ".join(cmd))
    proc = run_with_heartbeat(cmd, f"pip: {what}", progress, cancel=cancel)
    output = (proc.stdout + proc.stderr).strip()
    if proc.returncode < 0:
        raise LmrError(f"pip was killed by signal {-proc.returncode} while it tried to {what}")
    if proc.returncode != 0:
        tail = " | ".join(output.splitlines()[-6:]) or f"exit {proc.returncode} with no output"
        raise LmrError(f"pip could not {what}: {tail}")


def build_wheelhouse(
    lines: list[str],
    target: WheelTarget = HOST,
    *,
    progress: Progress | None = None,
    refresh: bool = False,
    cancel: threading.Event | None = None,
) -> Path:
    """The cached wheelhouse of ``lines`` and the harness requirements for ``target``; built when missing.

    Stops (Cancelled, nothing left behind) when ``cancel`` is set.
    Binary wheels only for a foreign target; when a requirement has no wheel for it and the host runs the same
    Python, the host's ``pip wheel`` builds one instead. The folder appears complete or not at all.
    """
    progress = progress or NullProgress()
    final = cache_root() / "wheels" / requirements_hash(lines, target)
    if final.is_dir() and not refresh:
        return final
    wanted = [*lines, *HARNESS_REQUIREMENTS]
    with staging_dir(final, replace=True) as tmp:
        req = tmp / "requirements.txt"
        req.write_text("\n".join(wanted) + "\n")
        try:
            _pip(
                ["download", "--quiet", "--dest", str(tmp), *target.pip_args(), "-r", str(req)],
                "download the requirements",
                progress,
                cancel,
            )
        except LmrError:
            host_py = f"{sys.version_info.major}.{sys.version_info.minor}"
            if target.python and target.python != host_py:
                raise
            progress.log("no binary wheel for every requirement: building them with the host's pip wheel")
            check_cancel(cancel)
            _pip(["wheel", "--quiet", "--wheel-dir", str(tmp), "-r", str(req)], "build wheels", progress, cancel)
        req.unlink()
    return final
