"""One image build on the engine: a tar context streamed from a temporary file, a progress line at least every
30 s (the step and the time so far), a one-line error naming the cause, and nothing left behind.

The classic builder (docker-py's API; no BuildKit) keeps an intermediate image per step. After a build, those of
its steps that no tagged image needs any more (a failed build's, a multi-stage build's install stage) are removed
by id: a failed torch build would otherwise leave gigabytes of dangling layers.
"""

from __future__ import annotations

import json
import re
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, TYPE_CHECKING

from lmrbench.benchmark.sandbox.environments.build_log import failure_headline
from lmrbench.defaults import cache_root
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_text
from lmrbench.progress import NullProgress, Progress, check_cancel
from lmrbench.subprocess_progress import HEARTBEAT_SECONDS

if TYPE_CHECKING:
    import docker

_STEP = re.compile(r"^Step (\d+/\d+) : (.*)$")
_ID = re.compile(r"^ ---> ([0-9a-f]{12,64})$")


def build_context(files: dict[str, bytes], dirs: dict[str, Path], wheels: list[Path] | None = None,
                  under: str = "wheels") -> IO[bytes]:
    """An uncompressed tar build context in a temporary file: ``files`` by name, whole folders under the names
    given, and ``wheels`` (files) under ``under/`` (an empty one when none)."""
    out = tempfile.TemporaryFile(prefix="lmrbench-context-")  # noqa: SIM115 - the caller streams and closes it
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, _Bytes(data))
        for name, folder in dirs.items():
            tar.add(str(folder), arcname=name)
        if wheels is not None:
            info = tarfile.TarInfo(under)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
            tar.addfile(info)
            for path in wheels:
                tar.add(str(path), arcname=f"{under}/{path.name}")
    out.seek(0)
    return out


class _Bytes:
    def __init__(self, data: bytes) -> None:
        self._data, self._pos = data, 0

    def read(self, n: int = -1) -> bytes:
        end = len(self._data) if n < 0 else self._pos + n
        chunk, self._pos = self._data[self._pos:end], min(end, len(self._data))
        return chunk


class BuildHeartbeat:
    """Says every ``every`` seconds which step a build is at, from a thread (a RUN may print nothing for
    minutes)."""

    def __init__(self, what: str, progress: Progress, every: float) -> None:
        self.step, self._what, self._progress, self._every = "sending the context", what, progress, every
        self._stop = threading.Event()
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._beat, daemon=True)

    def __enter__(self) -> BuildHeartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()

    def _beat(self) -> None:
        while not self._stop.wait(self._every):
            self._progress.log(f"note: building {self._what}: {self.step} ({time.monotonic() - self._t0:.0f} s)")


def docker_build(
    client: docker.DockerClient,
    context: IO[bytes],
    tag: str,
    *,
    what: str,
    buildargs: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    nocache: bool = False,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    every: float = HEARTBEAT_SECONDS,
) -> str:
    """Build an image from a tar context; on failure LmrError naming ``what`` and the line that says why (the
    whole log went to ``progress``). Intermediate images no tagged image needs are removed either way."""
    progress = progress or NullProgress()
    started = time.monotonic()
    log: list[str] = []
    steps: list[str] = []
    error = ""
    try:
        with BuildHeartbeat(what, progress, every) as beat:
            for chunk in client.api.build(fileobj=context, custom_context=True, tag=tag, rm=True, forcerm=True,
                                          buildargs=buildargs or {}, labels=labels or {}, decode=True,
                                          nocache=nocache):
                check_cancel(cancel)
                for line in str(chunk.get("stream", "")).splitlines():
                    if not line.strip():
                        continue
                    log.append(line)
                    progress.log(line)
                    if m := _STEP.match(line):
                        beat.step = f"step {m.group(1)} ({m.group(2)[:60]})"
                    elif m := _ID.match(line):
                        steps.append(m.group(1))
                if "error" in chunk:
                    error = str(chunk["error"]).strip()
    except LmrError:
        _remove_unneeded(client, steps)
        raise
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
    finally:
        context.close()
    found = None if error else image_id(client, tag)
    if found:
        record_build_seconds(tag, time.monotonic() - started)
    _remove_unneeded(client, steps)
    if error:
        cause = failure_headline("\n".join([*log[-40:], error])) or error
        raise LmrError(f"image build failed: {cause}", what)
    if found is None:
        raise LmrError(f"image build reported success but {tag} is missing", what)
    return found


def build_seconds_file() -> Path:
    """Where the seconds each image took to build are kept (tag -> seconds), for ``image list`` and benchmarks."""
    return cache_root() / "build-seconds.json"


def record_build_seconds(tag: str, seconds: float) -> None:
    """Remember how long ``tag`` took to build (best effort: a cache, never an error)."""
    path = build_seconds_file()
    try:
        data = json.loads(path.read_text()) if path.is_file() else {}
        data[tag] = round(seconds, 1)
        atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True))
    except (OSError, ValueError):
        pass


def build_seconds(tag: str) -> float | None:
    """How long ``tag`` took to build on this machine, when it was built here."""
    try:
        value = json.loads(build_seconds_file().read_text()).get(tag)
    except (OSError, ValueError):
        return None
    return float(value) if isinstance(value, int | float) else None


def image_id(client: docker.DockerClient, tag: str) -> str | None:
    """The id of a local image, or None when it is not there."""
    import docker

    try:
        return str(client.images.get(tag).id)
    except docker.errors.ImageNotFound:
        return None


def _remove_unneeded(client: docker.DockerClient, ids: list[str]) -> None:
    """Remove the untagged images among ``ids`` (newest first) that nothing depends on; an image still needed
    (a tagged image's parent, a cached step another image uses) is refused by the engine and kept."""
    for iid in reversed(ids):
        try:
            img = client.images.get(iid)
            if not img.tags:
                client.images.remove(img.id, noprune=False)
        except Exception:  # needed by another image, or gone already
            continue
