"""Host-side wheels: a task's requirements downloaded by the host's pip for the image's exact Python and
platform, installed offline in images.

Why: an image build may have no usable network at all (air-gapped labs), and where it has one, TLS may be
intercepted by a certificate authority that the host trusts but a fresh container does not (pip then fails
with CERTIFICATE_VERIFY_FAILED). The host's pip resolves for the image's interpreter (its full version:
a release may need Python >= 3.11.5 where the image has 3.11.2) and platform (every manylinux tag its glibc
accepts).

Every wheel is kept once, by file name, in ``<cache>/wheel-files``: a changed requirement downloads only what
changed. A resolution (requirements + target -> file names) is remembered in ``<cache>/wheel-sets``, so an
unchanged task calls no pip at all. ``build_wheelhouse`` gives a folder of hard links to the files of one
resolution (the form the local runner and exported folders use).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lmrbench.benchmark.sandbox.environments.build_log import failure_headline
from lmrbench.benchmark.sandbox.environments.machine_lock import MachineLock
from lmrbench.defaults import cache_root
from lmrbench.errors import EnvironmentUnavailable, LmrError
from lmrbench.fsutil import atomic_write_text, staging_dir
from lmrbench.progress import NullProgress, Progress, check_cancel
from lmrbench.subprocess_progress import run_with_heartbeat

HARNESS_REQUIREMENTS = ["pytest"]
"""What every environment gets besides the task's own requirements (the test runner)."""
PIP_OPTIONS = ("--extra-index-url", "--index-url", "--find-links", "-f", "-i")
"""pip options a task's requirements may hold: where to find wheels (e.g. a CPU-only torch)."""


@dataclass(frozen=True)
class WheelTarget:
    """The interpreter and platform wheels are for. ``python == ""`` means the host's own."""

    python: str = ""
    """The full version, e.g. "3.11.2" (Requires-Python is checked against it); empty for the host interpreter."""
    glibc: str = ""
    """glibc version of the target, e.g. "2.36" (manylinux tags up to it are accepted)."""
    machine: str = "x86_64"
    """CPU architecture."""

    @property
    def key(self) -> str:
        """A stable text identifying the target (part of cache keys)."""
        return f"py{self.python or 'host'}-glibc{self.glibc or 'host'}-{self.machine}"

    @property
    def minor(self) -> str:
        """Major.minor of the target ("" for the host)."""
        return ".".join(self.python.split(".")[:2])

    def platforms(self) -> list[str]:
        """Every manylinux platform tag a system with this glibc runs, newest first."""
        major, _, minor = (self.glibc or "2.17").partition(".")
        tags = [f"manylinux_{major}_{m}_{self.machine}" for m in range(int(minor or 17), 4, -1)]
        legacy = {"manylinux2014": 17, "manylinux2010": 12, "manylinux1": 5}
        tags += [f"{name}_{self.machine}" for name, need in legacy.items() if int(minor or 17) >= need]
        return tags

    def pip_args(self) -> list[str]:
        """pip download options selecting wheels for this target (none for the host)."""
        if not self.python:
            return []
        abi = "cp" + self.minor.replace(".", "")
        out = ["--python-version", self.python, "--implementation", "cp"]
        for a in (abi, "abi3", "none"):
            out += ["--abi", a]
        for tag in self.platforms():
            out += ["--platform", tag]
        return [*out, "--only-binary=:all:"]


HOST = WheelTarget()


def _split(line: str) -> list[str]:
    opt, _, rest = line.partition("=") if line.startswith("--") and "=" in line.split()[0] else (line, "", "")
    return [opt, rest] if rest else line.split(None, 1)


def requirement_lines(text: str) -> list[str]:
    """The requirement lines of a requirements file: comments, blanks and the index options of ``PIP_OPTIONS``
    dropped (``pip_options`` reads those), order kept; LmrError for any other pip option."""
    out = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            if _split(line)[0] in PIP_OPTIONS:
                continue
            raise LmrError(
                f"pip option {line.split()[0]!r} is not supported in a task's requirements; list plain "
                f"requirements, one a line (allowed options: {', '.join(PIP_OPTIONS[:3])})"
            )
        out.append(line)
    return out


def pip_options(text: str) -> list[str]:
    """The index options of a requirements file (``--extra-index-url URL``, ``--find-links DIR``...) as pip
    arguments, in order."""
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        parts = _split(line) if line.startswith("-") else []
        if len(parts) == 2 and parts[0] in PIP_OPTIONS:
            out += parts
    return out


def requirements_hash(lines: list[str], target: WheelTarget = HOST, options: list[str] | None = None) -> str:
    """A short hash of the requirements (with the harness's own), their index options and the target."""
    text = "\n".join([*lines, *HARNESS_REQUIREMENTS, target.key, *(options or [])])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def wheel_files_dir() -> Path:
    """The per-wheel cache: every downloaded wheel once, by its file name."""
    return cache_root() / "wheel-files"


def _pip(args: list[str], what: str, progress: Progress, cancel: threading.Event | None,
         how_far: Callable[[], str] | None = None) -> str:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", *args]
    progress.log("$ " + " ".join(cmd))
    proc = run_with_heartbeat(cmd, f"pip: {what}", progress, cancel=cancel, how_far=how_far)
    output = (proc.stdout + proc.stderr).strip()
    for line in output.splitlines():  # the whole output, shown with -v
        progress.log(f"pip: {line}")
    if proc.returncode < 0:
        raise LmrError(f"pip was killed by signal {-proc.returncode} while it tried to {what}")
    if proc.returncode != 0:
        raise EnvironmentUnavailable(f"pip could not {what}: {failure_headline(output) or f'exit {proc.returncode}'}",
                                     cause="requirement", output=output)
    return output


_SAVED = re.compile(r"^\s*(?:Saved|File was already downloaded)\s+(\S.*\.whl)\s*$", re.MULTILINE)
_NO_DIST = re.compile(r"No matching distribution found for ([A-Za-z0-9._-]+)(\S*)")
"""pip's line naming a requirement it found no wheel of: the project, then any version it was asked for."""


def _downloaded_size(folder: Path, before: int) -> Callable[[], str]:
    def say() -> str:
        try:
            size = sum(p.stat().st_size for p in folder.iterdir()) - before
        except OSError:
            return ""
        return f"{size / 1e6:,.0f} MB new in the wheel cache"
    return say


def resolve_wheels(
    lines: list[str],
    target: WheelTarget = HOST,
    *,
    options: list[str] | None = None,
    constraints: list[str] | None = None,
    progress: Progress | None = None,
    refresh: bool = False,
    cancel: threading.Event | None = None,
) -> list[Path]:
    """The wheel files (in the per-wheel cache) that ``lines`` and the harness requirements resolve to for
    ``target``; only wheels not yet cached are downloaded. ``constraints`` are pip constraints (e.g. the
    framework layer's ``torch==2.4.1``). Stops (Cancelled) when ``cancel`` is set."""
    progress = progress or NullProgress()
    key = requirements_hash([*lines, *(f"-c {c}" for c in constraints or [])], target, options)
    record = cache_root() / "wheel-sets" / f"{key}.txt"
    files = wheel_files_dir()
    kept = None if refresh else _recorded_set(record, files, lines)
    if kept is not None:
        return kept
    files.mkdir(parents=True, exist_ok=True)
    # one download into the shared wheel folder at a time: pip names a wheel it saved only when the file was not
    # there, so a second pip that fetched the same wheel meanwhile would say nothing of it
    with MachineLock("wheel-download", cancel):
        kept = None if refresh else _recorded_set(record, files, lines)  # another process's, made meanwhile
        if kept is not None:
            return kept
        names = _download_building(lines, target, options, constraints, progress, cancel)
        atomic_write_text(record, "\n".join(names) + "\n")
    return [files / n for n in names]


def _recorded_set(record: Path, files: Path, lines: list[str]) -> list[Path] | None:
    """The wheel files a recorded resolution names, when every one is in the cache and none of ``lines``' plainly
    named projects is missing from them; else None."""
    if not record.is_file():
        return None
    kept = [files / name for name in record.read_text().split()]
    return kept if all(p.is_file() for p in kept) and not missing_wheels(kept, lines) else None


def _download_building(lines: list[str], target: WheelTarget, options: list[str] | None,
                       constraints: list[str] | None, progress: Progress,
                       cancel: threading.Event | None) -> list[str]:
    """The wheel file names ``lines`` resolve to, building a wheel of a source-only requirement with the host's
    pip where the target is the host's Python."""
    files = wheel_files_dir()
    built: list[str] = []
    for _attempt in range(6):
        try:
            names = _download(lines, target, options or [], constraints or [], progress, cancel, bool(built))
            break
        except LmrError as exc:
            wanted = wheel_to_build(getattr(exc, "output", "") or exc.problem, lines)
            if wanted is None or not target.python or target.minor != _host_minor() or wanted[0] in built:
                raise
            # no wheel on the index for this target: build one from the source distribution with the host's pip
            # (same major.minor) and resolve again with it beside the index's wheels
            name, pins = wanted
            progress.log(f"no wheel of {name} for Python {target.python}: building one with the host's pip")
            check_cancel(cancel)
            try:
                _pip(["wheel", "--no-deps", "--wheel-dir", str(files), *(options or []), *pins],
                     f"build a wheel of {name}", progress, cancel)
            except LmrError as build_error:  # nothing to build from either: the download's own error says why
                progress.log(f"cannot build a wheel of {name} either: {build_error.problem}")
                raise exc from None
            built.append(name)
    else:
        raise LmrError("pip could not download the requirements: too many source-only distributions")
    return names


def unnamed_projects(output: str, names: list[str]) -> list[str]:
    """The projects pip's ``Successfully downloaded`` line lists with no wheel file among ``names`` (what a
    ``Saved`` or ``File was already downloaded`` line gave): a set recorded without them would install nothing
    of them."""
    said = re.search(r"^Successfully downloaded (.+)$", output, re.MULTILINE)
    have = {wheel_name(n)[0] for n in names}
    wanted = [re.sub(r"[-_.]+", "-", p).lower() for p in said.group(1).split()] if said else []
    return [p for p in wanted if p not in have]


def wheel_to_build(output: str, lines: list[str]) -> tuple[str, list[str]] | None:
    """(project, what to build) when pip's whole ``output`` says it found no wheel of a requirement: the task's
    own line of that project, else the version a dependency asked for (``antlr4-python3-runtime==4.9.*``);
    None when it says nothing of the kind."""
    missing = _NO_DIST.search(output)
    if missing is None:
        return None
    name = missing.group(1)
    pins = [r for r in lines if re.match(rf"^{re.escape(name)}\b", r, re.IGNORECASE)]
    return name, pins or [name + missing.group(2)]


def _host_minor() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def _download(lines: list[str], target: WheelTarget, options: list[str], constraints: list[str],
              progress: Progress, cancel: threading.Event | None, local_builds: bool) -> list[str]:
    files = wheel_files_dir()
    with tempfile.TemporaryDirectory(prefix="lmrbench-req-") as tmp_name:
        tmp = Path(tmp_name)
        req = tmp / "requirements.txt"
        req.write_text("\n".join([*lines, *HARNESS_REQUIREMENTS]) + "\n")
        args = ["download", "--progress-bar", "off", "--dest", str(files), *target.pip_args(), *options, "-r", str(req)]
        if constraints:
            (tmp / "constraints.txt").write_text("\n".join(constraints) + "\n")
            args += ["-c", str(tmp / "constraints.txt")]
        if local_builds and target.python:  # wheels built here carry the host's platform tag
            args += ["--find-links", str(files), "--platform", f"linux_{target.machine}"]
        before = sum(p.stat().st_size for p in files.iterdir())
        output = _pip(args, "download the requirements", progress, cancel, _downloaded_size(files, before))
    names = sorted({Path(m).name for m in _SAVED.findall(output)})
    unnamed = unnamed_projects(output, names)
    if unnamed:
        raise LmrError(f"pip downloaded {', '.join(unnamed)} without naming the wheel file; try again")
    broken = [n for n in names if not zipfile.is_zipfile(files / n)]
    for n in broken:  # a copy cut short by a killed pip: fetch it again
        (files / n).unlink(missing_ok=True)
    if broken:
        raise LmrError(f"pip left broken wheels in the cache ({', '.join(broken)}): removed; try again")
    return names


def build_wheelhouse(
    lines: list[str],
    target: WheelTarget = HOST,
    *,
    options: list[str] | None = None,
    progress: Progress | None = None,
    refresh: bool = False,
    cancel: threading.Event | None = None,
) -> Path:
    """A folder holding the wheels of ``lines`` and the harness requirements for ``target`` (hard links into the
    per-wheel cache), made when missing. The folder appears complete or not at all.

    For the host, a requirement with no wheel at all is built by the host's ``pip wheel``."""
    progress = progress or NullProgress()
    final = cache_root() / "wheels" / requirements_hash(lines, target, options)
    if final.is_dir() and not refresh:
        lacking = missing_wheels(list(final.glob("*.whl")), lines)
        if not lacking:
            return final
        refresh = True  # a folder made from a set that lost a wheel (see ``resolve_wheels``): made again
        progress.log(f"the wheel folder {final.name} lacks {', '.join(lacking)}: resolving again")
    try:
        wheels = resolve_wheels(lines, target, options=options, progress=progress, refresh=refresh, cancel=cancel)
    except LmrError:
        if target.python:
            raise
        progress.log("no binary wheel for every requirement: building them with the host's pip wheel")
        check_cancel(cancel)
        with staging_dir(final, replace=True) as tmp:
            (tmp / "r.txt").write_text("\n".join([*lines, *HARNESS_REQUIREMENTS]) + "\n")
            _pip(["wheel", "--quiet", "--wheel-dir", str(tmp), *(options or []), "-r", str(tmp / "r.txt")],
                 "build wheels", progress, cancel)
            (tmp / "r.txt").unlink()
        return final
    with staging_dir(final, replace=True) as tmp:
        link_files(wheels, tmp)
    return final


def missing_wheels(wheels: list[Path], lines: list[str]) -> list[str]:
    """The projects that ``lines`` name plainly (``numpy``, ``numpy==2.1``) of which ``wheels`` hold none."""
    have = {wheel_name(p)[0] for p in wheels}
    out = []
    for line in lines:
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~;]|$)", line.strip())
        if m and not any(c in line for c in ("@", "://", ";")):  # a marker may leave it out on this platform
            name = re.sub(r"[-_.]+", "-", m.group(1)).lower()
            if name not in have:
                out.append(name)
    return out


def link_files(files: list[Path], dest: Path) -> None:
    """Hard links of ``files`` in ``dest`` (copies across file systems)."""
    for f in files:
        try:
            os.link(f, dest / f.name)
        except OSError:
            shutil.copy2(f, dest / f.name)


def wheel_name(path: Path | str) -> tuple[str, str]:
    """(canonical project name, version) of a wheel file name."""
    parts = Path(path).name.split("-")
    return re.sub(r"[-_.]+", "-", parts[0]).lower(), parts[1] if len(parts) > 1 else ""
