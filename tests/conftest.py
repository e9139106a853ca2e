"""Shared fixtures: fixture repositories and papers are written here by the tests themselves."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pymupdf
import pytest

from helpers.llm_server import LLMServer
from helpers.vec_task import write_small_task
from lmrbench.core.taskset import Task

pytest_plugins = ["helpers.docker_engine"]
os.environ.setdefault("LMRBENCH_DATA", tempfile.mkdtemp(prefix="lmrbench-data-"))  # seal key, export records
DOCKER_TESTS = Path(__file__).parent / "docker"
_HERE = Path(__file__).parent
SLOW_PATHS = (DOCKER_TESTS, _HERE / "cli", _HERE / "tui", _HERE / "benchmark" / "test_wheel_resolution.py",
              _HERE / "benchmark" / "test_local_runner.py", _HERE / "benchmark" / "test_sandbox_conformance.py",
              _HERE / "benchmark" / "test_warm_preload.py")
"""Left out of the quick tier: the Docker tests, the installed console script run as a user runs it, the app,
wheels downloaded from PyPI and the local runner's venvs."""
REAL_RUN_FILES = tuple(_HERE / f for f in (
    "authoring/test_record.py", "authoring/test_catching.py", "authoring/test_search.py",
    "authoring/test_amplify_reads.py", "authoring/test_scalar_promotion.py", "authoring/test_example_answers.py",
    "authoring/test_check_planted.py", "benchmark/test_evaluate.py", "benchmark/test_figures.py",
    "benchmark/test_pytest_run.py", "benchmark/test_context.py", "benchmark/test_results_tables.py",
    "benchmark/test_regrade.py", "benchmark/test_earned_scores.py", "benchmark/test_familiarity.py",
    "benchmark/test_requirements_source.py", "benchmark/test_predictions.py", "benchmark/test_regrade_authenticates.py",
    "benchmark/test_local_reads.py", "benchmark/test_base_image.py", "benchmark/test_contained_cli.py",
    "benchmark/test_validate.py", "benchmark/test_split_limits.py", "benchmark/test_suggest_create.py",
    "benchmark/test_verdicts_both_ways.py", "benchmark/test_regression.py", "benchmark/test_warm_local.py",
    "benchmark/test_validate_not_run.py", "benchmark/test_splice_verdicts.py", "benchmark/test_report.py",
    "benchmark/test_validate_strength.py", "benchmark/test_tolerance_probe.py", "authoring/test_untouched_arguments.py",
    "authoring/test_unvaried_inputs.py", "authoring/test_search_paths.py",
    "authoring/test_unset_settings.py",
))
"""Also left out of the quick tier: files whose tests record a driver's calls, validate or grade for real in
subprocesses (seconds of CPU each; measured with ``helpers.costs``). The quick tier keeps every test of their
modules' logic that runs in-process."""


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers more than the machine has cores. A Docker test spends much of its time waiting for
    the engine (container starts, builds, layer commits, a fresh machine's install), which the test process's own
    CPU time does not show (654 s of it in 2,036 s of test time); the extra workers fill that time. On 2 cores the
    whole suite took 531 s with four workers (each 509 s busy) against 628 s with three, in the same tree; in one
    clean clone, run twice more, 583 s with four and 592 s with five."""
    return (os.cpu_count() or 1) + 2


PYCACHE = Path(tempfile.gettempdir()) / "lmrbench-test-pycache"
"""Where the suite's interpreters keep compiled bytecode (PYTHONPYCACHEPREFIX): outside every source tree, so no
``__pycache__`` appears in a task or repository a test hashes, copies or checks for ``.pyc`` files."""


def _keep_bytecode() -> None:
    """Compiled modules are kept and reused by every interpreter of the run: the xdist workers (their assertion
    rewriting of the test modules) and the console scripts the tests start, which import lmrbench afresh each time.
    A machine that sets PYTHONDONTWRITEBYTECODE (a CI image may) would otherwise have each of them compile
    everything again: 14 s of collection per worker, and seconds per command. Sandboxed runs set their own
    environment and are not affected."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    sys.dont_write_bytecode = False
    sys.pycache_prefix = str(PYCACHE)


def pytest_configure(config: pytest.Config) -> None:
    """Bytecode kept (``_keep_bytecode``), before the workers start. Tests press Ctrl-C (SIGINT) on the commands
    they start, as a user at a terminal would. A shell that starts pytest as a background job (``cmd &`` in a
    script) has it ignore SIGINT, and an ignored signal stays ignored across exec, so those commands would never see
    the Ctrl-C: give SIGINT back its default handling first."""
    _keep_bytecode()
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Longest first: tests marked ``long``, then the Docker folder, then the rest. xdist hands tests out in
    collection order, so a two-minute test collected last keeps one worker busy while the others have finished.
    The sort is stable: each file keeps its order. Every other test, but those of REAL_RUN_FILES, is marked
    ``quick`` (``pytest -m quick``)."""

    def rank(item: pytest.Item) -> int:
        if item.get_closest_marker("long"):
            return 0
        return 1 if DOCKER_TESTS in item.path.parents else 2

    items.sort(key=rank)
    for item in items:
        if not (any(item.get_closest_marker(m) for m in ("docker", "long", "network"))
                or any(p == item.path or p in item.path.parents for p in (*SLOW_PATHS, *REAL_RUN_FILES))):
            item.add_marker(pytest.mark.quick)

GIT_ENV = {
    "GIT_AUTHOR_NAME": "fixture",
    "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
    "GIT_COMMITTER_NAME": "fixture",
    "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
}


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` with a fixed identity; return stdout."""
    out = subprocess.run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip()


def write_git_repo(root: Path, files: dict[str, str | bytes]) -> str:
    """Create a git repository at ``root`` holding ``files``, committed; return the commit sha."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    if not (root / ".git").exists():
        git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fixture")
    return git(root, "rev-parse", "HEAD")


def write_pdf(path: Path, pages: list[str]) -> Path:
    """A real PDF with one page per string, made with PyMuPDF."""
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(50, 50, 550, 800), text, fontsize=11)
    doc.save(path)
    doc.close()
    return path


LOSS_PY = '''"""Toy losses."""
import numpy as np


def log_sigmoid(x):
    return -np.logaddexp(0.0, -x)


def preference_loss(chosen, rejected, beta=0.1):
    """The DPO loss on log-ratios."""
    logits = chosen - rejected
    losses = -log_sigmoid(beta * logits)
    return losses


class Scaler:
    def __init__(self, k):
        self.k = k

    def scale(self, x):
        """Multiply by k."""
        out = x * self.k
        return out
'''


@pytest.fixture
def fixture_repo(tmp_path: Path) -> Path:
    """A small committed git repository with a numpy loss module and a driver script."""
    root = tmp_path / "src-repo"
    write_git_repo(root, {
        "losses.py": LOSS_PY,
        "train.py": "import numpy as np\nfrom losses import preference_loss\n\n"
                    "print(preference_loss(np.array([1.0, 2.0]), np.array([0.5, 3.0])))\n",
        "requirements.txt": "numpy\n",
        "README.md": "# toy\n",
    })
    return root


@pytest.fixture
def fixture_pdf(tmp_path: Path) -> Path:
    """A two-page paper PDF."""
    return write_pdf(tmp_path / "paper.pdf", ["A Toy Paper\nWe study the loss L = -log sigma(beta h).",
                                              "Section 2\nThe method in detail."])


@pytest.fixture
def make_repo() -> Callable[[Path, dict[str, str | bytes]], str]:
    """The write_git_repo helper, for tests that build their own repositories."""
    return write_git_repo


@pytest.fixture
def small_task(tmp_path: Path) -> Task:
    """A fresh small task (pure Python, no requirements) written by the test."""
    return write_small_task(tmp_path / "bench")


@pytest.fixture
def anyio_backend() -> str:
    """Pilot tests run on asyncio."""
    return "asyncio"


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    """An empty task set folder."""
    path = tmp_path / "bench"
    path.mkdir()
    return path


@pytest.fixture
def server() -> Iterator[LLMServer]:
    """A fresh scripted OpenAI-compatible server on 127.0.0.1 for one test, closed after it."""
    srv = LLMServer()
    yield srv
    srv.close()
