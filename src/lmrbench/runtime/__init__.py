"""Standalone modules that run inside a task's sandbox, where lmrbench is not installed (standard library, numpy,
pytest): the value codec and checkers shipped into tasks, the recorder, the pytest report plugin, and the split-run
programs (boot, candidate worker, call proxy). lmrbench reads them as files and ships them; it imports only the
codec, the checkers and the protocol itself. No module here imports lmrbench.

This module is the one list of what ships into a sandbox and under which name. The codec ships twice: as
``lmrbench_values.py`` into a task's ``unit_test/`` (the generated tests import it, and a task keeps the copy it
was recorded with), and as ``lmrbench_codec.py`` into the harness folders of a split run, so that the harness's
own codec is never shadowed by a task's older copy on the path. Its writing half, ``lmrbench_values_encoder.py``,
goes with it under the same renaming (``lmrbench_codec_encoder.py``): the codec imports it by its own module name
plus ``_encoder``, so the harness's pair and a task's pair never share a module in one process.
"""

from __future__ import annotations

from pathlib import Path

RUNTIME_DIR = Path(__file__).parent
"""Where the standalone runtime modules live."""

PROTOCOL = "lmrbench_protocol.py"
"""Names and limits both sides of the boundary use (environment variables, frame markers, the seal digest)."""
CODEC = ("lmrbench_values.py", "lmrbench_values_encoder.py")
"""The value codec: the module the generated tests import, then its writing half (``codec_files`` renames both)."""
CODEC_SHIPPED_AS = "lmrbench_codec.py"
"""The harness's name for ``lmrbench_values.py``; its encoder goes beside it as ``lmrbench_codec_encoder.py``."""

TEST_RUNTIME = (*CODEC, "lmrbench_reply.py", "lmrbench_precision.py", "lmrbench_checkers.py")
"""Modules copied into a task's ``unit_test/`` for its generated tests."""
RECORD_RUNTIME = (*TEST_RUNTIME, "lmrbench_hook.py", "lmrbench_leaves.py", "lmrbench_record.py", "lmrbench_ties.py",
                  "sitecustomize.py", PROTOCOL)
"""Modules put first on the Python path of a recorded command."""
PROBE_RUNTIME = (*TEST_RUNTIME, "lmrbench_leaves.py", "lmrbench_variations.py", "lmrbench_layouts.py",
                 "lmrbench_input_text.py", "lmrbench_raising.py", "lmrbench_ties.py", "lmrbench_scan.py",
                 "lmrbench_edges.py", "lmrbench_search.py", "lmrbench_probe.py", PROTOCOL)
"""The program run after a recording, on the golden tree: cases added where a parameter never varied, and the
mutants each case kills (``python3 -m lmrbench_probe``)."""
WORKER_RUNTIME = ("lmrbench_worker.py", "lmrbench_wire.py", "lmrbench_reply.py", "lmrbench_identity.py", PROTOCOL)
"""The candidate's worker (plus the codec, as ``CODEC_SHIPPED_AS``): nothing else reaches its harness folder."""
PROXY_PLUGIN = "lmrbench_proxy"
"""The module the trusted side of a split run loads first (a pytest plugin, or imported by the legacy driver)."""
TRUSTED_RUNTIME = (f"{PROXY_PLUGIN}.py", "lmrbench_hook.py", "lmrbench_wire.py", "lmrbench_reply.py",
                   "lmrbench_identity.py", PROTOCOL)
"""The trusted side's harness for a split run (plus the codec, as ``CODEC_SHIPPED_AS``); ``lmrbench_reply`` is
the allow-list decoder of the worker's replies."""
SEAL_PLUGIN = "lmrbench_seal"
"""The pytest plugin that writes the sealed report (every pytest run, split or shared)."""
HARBOR_GRADER = "lmrbench_harbor.py"
"""The grader of an exported Harbor task (``tests/``): the boot on its payload plus the agent's goal files, then the
verdict and the reward; it imports ``PROTOCOL``, shipped beside it (``harbor_files``)."""
HARBOR_DOCKER = "lmrbench_harbor_docker.py"
"""Harbor's Docker environment with Docker's own ``network_mode: none`` (no registry needed), written beside an
exported Harbor dataset's tasks and loaded by Harbor's Python (``--env lmrbench_harbor_docker:OfflineDocker``)."""
BOOT = "lmrbench_boot.py"
"""The boot script; it runs as ``python -c`` with the sources of ``BOOT_PRELUDE`` before its own."""
BOOT_PRELUDE = (PROTOCOL, "lmrbench_frames.py")
"""What runs before the boot in its ``-c`` source: the protocol, then the byte formats it reads and writes."""


def runtime_files(names: tuple[str, ...] | list[str]) -> dict[str, bytes]:
    """The bytes of the named runtime modules, by file name."""
    return {name: (RUNTIME_DIR / name).read_bytes() for name in names}


def codec_files(shipped_as: str = CODEC[0]) -> dict[str, bytes]:
    """The codec's files, its main module named ``shipped_as`` and each part named after it (``lmrbench_codec.py``
    with ``lmrbench_codec_encoder.py``): the main module imports its parts by its own name."""
    stem, main = shipped_as.removesuffix(".py"), CODEC[0].removesuffix(".py")
    return {name.replace(main, stem, 1): data for name, data in runtime_files(CODEC).items()}


def _with_codec(names: tuple[str, ...]) -> dict[str, bytes]:
    return {**runtime_files(names), **codec_files(CODEC_SHIPPED_AS)}


def worker_files() -> dict[str, bytes]:
    """The candidate worker's harness folder of a split run."""
    return _with_codec(WORKER_RUNTIME)


def trusted_split_files() -> dict[str, bytes]:
    """What the trusted side of a split run adds to its harness folder: the call proxy and the codec."""
    return _with_codec(TRUSTED_RUNTIME)


def boot_source() -> str:
    """The boot script's ``-c`` source: its prelude, then the boot script (which imports nothing else)."""
    files = runtime_files((*BOOT_PRELUDE, BOOT))
    return "\n".join(files[name].decode("utf-8") for name in (*BOOT_PRELUDE, BOOT))


def harbor_files() -> dict[str, bytes]:
    """What an exported Harbor task's ``tests/`` holds of the runtime: the grader, the protocol it imports and the
    boot's whole ``-c`` source as ``lmrbench_boot.py``."""
    return {**runtime_files((HARBOR_GRADER, PROTOCOL)), BOOT: boot_source().encode("utf-8")}
