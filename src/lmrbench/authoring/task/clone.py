"""Clone a repository (URL or local path) at a pinned commit into a plain folder with no git history."""

from __future__ import annotations

import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import git

from lmrbench.errors import LmrError
from lmrbench.progress import NullProgress, Progress, check_cancel

# Folders never copied into a task: history, caches and build output that could hold the original bodies.
SKIP_DIRS = frozenset({".git", "__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".mypy_cache", "build", "dist",
                       ".eggs", ".tox", ".venv", "venv", "node_modules"})


@dataclass(frozen=True)
class ClonedRepo:
    """A repository copied into ``path`` (no .git), from ``url`` at ``commit`` (None for a plain folder)."""

    path: Path
    url: str
    commit: str | None


def _copy_tree(src: Path, dest: Path) -> None:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns(*SKIP_DIRS, "*.pyc"), symlinks=True)


def _one_line(exc: git.GitCommandError) -> str:
    lines = [ln.strip() for ln in str(exc.stderr or exc).splitlines() if ln.strip()]
    msg = next((ln for ln in reversed(lines) if "fatal" in ln), lines[-1] if lines else str(exc))
    return msg.replace("stderr:", "").strip().strip("'")


def _reason(exc: Exception) -> str:
    if isinstance(exc, git.GitCommandError):
        return _one_line(exc)
    return " ".join(str(exc).split()) or type(exc).__name__


def is_git_repo(path: Path) -> bool:
    """True for a work tree (``.git`` inside) and for a bare repository (HEAD, objects/ and refs/ at the top)."""
    path = Path(path)
    if (path / ".git").exists():
        return True
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def source_url(source: str) -> str:
    """The repo_url recorded for a clone source: a local path resolved, a URL as given."""
    local = Path(source).expanduser()
    return str(local.resolve()) if local.exists() else source


def clone_repo(
    source: str,
    dest: Path,
    commit: str | None = None,
    *,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> ClonedRepo:
    """Copy ``source`` (git URL, local git repo, or plain folder) at ``commit`` (default HEAD) into ``dest``.

    The source is never modified; ``dest`` must not exist and holds no git history afterwards.
    """
    progress = progress or NullProgress()
    dest = Path(dest)
    if dest.exists():
        raise LmrError("already exists", dest)
    local = Path(source).expanduser()
    if local.exists() and not is_git_repo(local) and commit is None:
        if not local.is_dir():
            raise LmrError("not a folder or git repository", local)
        progress.start(f"copy {local.name}", None)
        _copy_tree(local, dest)
        return ClonedRepo(path=dest, url=source_url(source), commit=None)
    url = source_url(source)
    progress.start(f"clone {url}", None)
    with tempfile.TemporaryDirectory(prefix="lmrbench-clone-") as tmp:
        try:
            repo = git.Repo.clone_from(url, Path(tmp) / "repo", no_checkout=True)
        except git.GitCommandError as exc:
            raise LmrError(f"clone failed: {_one_line(exc)}", source) from None
        check_cancel(cancel)
        rev = commit or "HEAD"
        try:
            sha = repo.commit(rev).hexsha
        except (git.GitCommandError, git.BadName, ValueError) as exc:
            what = f"no commit {commit!r} in the repository" if commit else "the repository has no HEAD commit"
            raise LmrError(f"{what} ({_reason(exc)})", source) from None
        try:
            repo.git.checkout(sha, force=True)
        except git.GitCommandError as exc:
            raise LmrError(f"checkout of {sha[:12]} failed: {_one_line(exc)}", source) from None
        check_cancel(cancel)
        _copy_tree(Path(tmp) / "repo", dest)
        repo.close()
    progress.advance(1, sha[:12])
    return ClonedRepo(path=dest, url=url, commit=sha)
