"""Base images without a registry: a Debian root filesystem made by mmdebstrap (or debootstrap), imported
into Docker, with a venv at /opt/venv holding pytest installed offline from a host-side wheelhouse.

Task images build on it through ``ARG BASE_IMAGE``. Where a registry is reachable the official python
image serves as well; on machines without one ``lmrbench image bootstrap`` makes ``BASE_IMAGE_TAG`` once
and reuses it.
"""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lmrbench.benchmark.sandbox.environments.image_build import image_id
from lmrbench.benchmark.sandbox.environments.wheelhouse import WheelTarget, build_wheelhouse
from lmrbench.defaults import BASE_IMAGE_TAG
from lmrbench.errors import LmrError
from lmrbench.progress import NullProgress, Progress, check_cancel

if TYPE_CHECKING:
    import docker

OFFICIAL_BASE_IMAGE = "python:3.11-slim"
"""The default BASE_IMAGE of generated Dockerfiles, used where a registry is reachable."""
BASE_LABEL = "org.lmrbench.base"
DEBIAN_SUITE = "bookworm"
DEBIAN_PACKAGES = ["python3", "python3-venv", "ca-certificates", "passwd", "tar"]
"""What the root filesystem adds to minbase: the venv's pip comes from python3-venv (ensurepip), so Debian's own
pip, setuptools and wheel stay out."""
SLIM = ["--dpkgopt=path-exclude=/usr/share/" + d + "/*" for d in ("man", "doc", "locale", "info")]
SLIM.append("--dpkgopt=path-include=/usr/share/doc/*/copyright")
"""mmdebstrap's dpkg options that keep manuals, documentation and translations out (their licences stay)."""
MERGED_USR_HOOK = Path("/usr/share/mmdebstrap/hooks/merged-usr")
"""mmdebstrap's hook that merges /usr itself: without it bookworm gets the usrmerge package, and perl with it."""
BASE_TARGET = WheelTarget(python="3.11.2", glibc="2.36")
"""Python and glibc of Debian bookworm: what the base image's wheels are downloaded for."""
INSTALL_HINT = "install mmdebstrap (apt-get install mmdebstrap) or debootstrap"


def docker_client(timeout: int = 120) -> docker.DockerClient:
    """A client of the local engine; LmrError when none answers."""
    import docker

    try:
        client = docker.from_env(timeout=timeout)
        if str(client.api.base_url).startswith("http+docker://"):
            # a local socket: no proxy, .netrc or CA bundle applies, and looking for them in the environment
            # costs every request (a run makes about ten)
            client.api.trust_env = False
        client.ping()
    except Exception as exc:
        raise LmrError(f"no Docker engine answers ({type(exc).__name__}: {exc})") from exc
    return client


@dataclass(frozen=True)
class BootstrapResult:
    """What ``bootstrap_base_image`` did."""

    tag: str
    image_id: str
    created: bool
    """False when an existing image was reused."""
    seconds: float
    tool: str = ""
    """mmdebstrap or debootstrap; empty when reused."""


def _rootfs_tar(dest: Path, suite: str, mirror: str | None, progress: Progress) -> tuple[Path, str]:
    """Make a Debian root filesystem tarball in ``dest``; return it and the tool used."""
    tar = dest / "rootfs.tar"
    mirrors = [mirror] if mirror else []
    if shutil.which("mmdebstrap"):
        hooks = [f"--hook-dir={MERGED_USR_HOOK}"] if MERGED_USR_HOOK.is_dir() else []
        cmd = [
            "mmdebstrap",
            "--variant=minbase",
            "--include=" + ",".join(DEBIAN_PACKAGES),
            *hooks,
            *SLIM,
            suite,
            str(tar),
            *mirrors,
        ]
        tool = "mmdebstrap"
    elif shutil.which("debootstrap"):
        root = dest / "rootfs"
        cmd = [
            "debootstrap",
            "--variant=minbase",
            "--include=" + ",".join(DEBIAN_PACKAGES),
            suite,
            str(root),
            *mirrors,
        ]
        tool = "debootstrap"
    else:
        raise LmrError(
            f"cannot build a base image: neither mmdebstrap nor debootstrap is installed; {INSTALL_HINT}"
        )
    progress.log("$ " + " ".join(cmd))
    lines: list[str] = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                          errors="replace") as proc:
        assert proc.stdout is not None
        for line in proc.stdout:  # its phases ("I: downloading packages with apt...") as they come, not a bare 0%
            lines.append(line.rstrip())
            if line.startswith("I: "):
                progress.advance(0, f"{tool}: {line[3:].strip()}"[:120])
                progress.log(line.rstrip())
    if proc.returncode != 0:
        tail = " | ".join(ln for ln in lines[-5:] if ln.strip())
        raise LmrError(f"{tool} failed (exit {proc.returncode}): {tail}")
    if tool == "debootstrap":
        with tarfile.open(tar, "w") as out:
            out.add(str(dest / "rootfs"), arcname=".")
    return tar, tool


ROOTFS_CHANGES = ["ENV LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1",
                  "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 'CMD ["python3"]']
"""What ``docker import`` sets on the root filesystem's image (an imported image has no environment at all)."""


def bootstrap_base_image(
    tag: str = BASE_IMAGE_TAG,
    *,
    force: bool = False,
    suite: str = DEBIAN_SUITE,
    mirror: str | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> BootstrapResult:
    """Make the base image from Debian packages, or reuse it when ``tag`` exists (``force`` rebuilds).

    Steps: mmdebstrap (or debootstrap) writes a minbase root filesystem with Python 3; ``docker import``
    makes it an image; one commit on top adds /opt/venv with pytest from a host-side wheelhouse (offline), as a
    task layer's is made (``commit_build``).
    """
    from lmrbench.benchmark.sandbox.environments.commit_build import commit_build

    progress = progress or NullProgress()
    t0 = time.monotonic()
    client = docker_client(timeout=600)
    existing = image_id(client, tag)
    if existing and not force:
        return BootstrapResult(tag, existing, created=False, seconds=time.monotonic() - t0)
    progress.start(f"bootstrap {tag}", 3)
    wheels = build_wheelhouse([], BASE_TARGET, progress=progress)
    with tempfile.TemporaryDirectory(prefix="lmrbench-rootfs-") as tmp:
        tar, tool = _rootfs_tar(Path(tmp), suite, mirror, progress)
        progress.advance(1, f"{tool} done")
        check_cancel(cancel)
        rootfs_tag = f"{tag}-rootfs"
        repo, _, version = rootfs_tag.rpartition(":")
        client.api.import_image_from_file(str(tar), repository=repo, tag=version, changes=ROOTFS_CHANGES)
    progress.advance(1, "imported")
    try:
        new_id = commit_build(client, rootfs_tag, tag, requirements=[], wheels=sorted(wheels.glob("*.whl")),
                              user=None, labels={BASE_LABEL: "1"}, what=tag, progress=progress, cancel=cancel)
    finally:
        try:
            client.images.remove(rootfs_tag, noprune=True)
        except Exception as exc:  # the tag stays; harmless, but say so
            progress.log(f"could not untag {rootfs_tag}: {exc}")
    progress.advance(1, "pytest installed")
    return BootstrapResult(tag, new_id, created=True, seconds=time.monotonic() - t0, tool=tool)
