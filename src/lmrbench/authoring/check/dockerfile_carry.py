"""What a task's own Dockerfile installs, carried into the Dockerfile lmrbench writes (``image dockerfile --force``).

lmrbench's image holds the Python environment only: no task files (the runner copies the repository in for each
run). So each step of the original is read for what it gives the environment, and either carried or refused by
name, never dropped in silence:

- ``pip install -r FILE`` (relative to ``WORKDIR`` and ``cd``) and ``pip install PKG...``: their requirements go
  into the task's requirements file; ``pip install --upgrade pip setuptools wheel`` changes nothing lmrbench uses;
- ``pip install -e SUB`` of a folder of the repository: the folder is put on the import path of every run, found
  from the run's working directory (the repository of the variant under test, so the candidate's code is what is
  imported), after every other entry (a test that drops ``sys.path[0]`` still finds it); the package's own
  requirements (``install_requires`` of its setup.py, ``dependencies`` of its pyproject.toml) are added;
- ``FROM pytorch/pytorch:V-...``: when no requirement names torch, a note that the image held torch ``V``, naming
  the requirements file the build reads (the author adds it: torch is large, and stays out of an environment that
  does not ask for it);
- ``ENV`` and every other shell step (``apt-get install``, ``mkdir``, ...): as written, run as root; a path into
  the repository (``HF_HOME=/workspace/${DIR}/unit_test/.cache``) made relative to the run's working directory,
  which is the repository;
- the official runner's own steps (the user, ``unit_test/logs``, ``COPY . .``, ``USER``, ``ARG``) are lmrbench's
  already.

Refused, each named: a pip option lmrbench's resolution cannot honour (``--no-deps``, an index), a local path that
is not an editable folder of the repository, a step that reads the task's files otherwise.
"""

from __future__ import annotations

import ast
import base64
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from lmrbench import pyparse
from lmrbench.errors import LmrError
from lmrbench.runtime.lmrbench_protocol import ENV_EDITABLE

EDITABLE_ENV = ENV_EDITABLE
"""The image's variable naming the repository folders put on the import path (``:``-separated, relative)."""
_PTH = (
    "import os, sys; exec({code!r})\n"
)
_HOOK = """\
class _LmrbenchEditable:
    def __init__(self, entry):
        if not entry.startswith('lmrbench-editable:'):
            raise ImportError(entry)
        self.rel = entry.split(':', 1)[1]
    def find_spec(self, name, target=None):
        import importlib.machinery
        return importlib.machinery.PathFinder.find_spec(name, [os.path.join(os.getcwd(), self.rel)])
    def invalidate_caches(self):
        pass
sys.path_hooks.append(_LmrbenchEditable)
sys.path.extend('lmrbench-editable:' + p for p in os.environ.get('LMRBENCH_EDITABLE', '').split(':') if p)
"""
PTH_TEXT = _PTH.format(code=_HOOK)
"""The ``.pth`` line of an image with editable folders: a path hook that finds them from the working directory."""
_PIP_QUIET = frozenset({"--no-cache-dir", "-q", "--quiet", "-U", "--upgrade", "--user", "--progress-bar=off",
                        "--disable-pip-version-check", "--no-warn-script-location", "--pre"})
_TOOLING = frozenset({"pip", "setuptools", "wheel"})
_OFFICIAL = re.compile(r"^(groupadd|useradd)\b|unit_test/logs|usergroup")


@dataclass
class Carried:
    """What an original Dockerfile's steps give the environment."""

    requirements: list[str] = field(default_factory=list)
    """Requirement lines (from ``-r`` files and ``pip install PKG``), in order."""
    editable: list[str] = field(default_factory=list)
    """Repository folders installed with ``pip install -e``, relative to the repository."""
    shell: list[str] = field(default_factory=list)
    """Shell steps carried as written (root, before the image's user)."""
    env: list[str] = field(default_factory=list)
    """``ENV`` instructions' arguments, as written (``${DIR}`` made the repository's folder)."""
    said: list[str] = field(default_factory=list)
    """One line per step carried or left to lmrbench, for the author."""
    torch: str = ""
    """The torch version the FROM image (``pytorch/pytorch:V-...``) held when no requirement names torch: the
    writer notes it, naming the requirements file the build reads."""


def _instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) of each instruction, continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not current and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        current += " " + line[:-1] if line.endswith("\\") else " " + line
        if not line.endswith("\\"):
            word, _, rest = current.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
            current = ""
    if current.strip():
        word, _, rest = current.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


class _Reader:
    def __init__(self, task_dir: Path, repo: str) -> None:
        self.task_dir, self.repo = task_dir, repo
        self.cwd = PurePosixPath("/")
        self.copy_root = PurePosixPath("/workspace")
        self.out = Carried()

    def _expand(self, text: str) -> str:
        return re.sub(r"\$\{DIR\}|\$DIR\b", self.repo, text)

    def _task_path(self, path: str) -> PurePosixPath | None:
        """``path`` (relative to the current directory) relative to the task folder, when it lies in the copy."""
        full = PurePosixPath(*(self.cwd / self._expand(path)).parts)
        norm = PurePosixPath("/" + "/".join(p for p in _normalize(full.parts)))
        try:
            return norm.relative_to(self.copy_root)
        except ValueError:
            return None

    def instruction(self, word: str, args: str) -> None:
        if word == "WORKDIR":
            self.cwd = self.cwd / self._expand(args)
        elif word == "ENV":
            value = self._expand(args).replace(f"{self.copy_root}/{self.repo}/", "")
            if str(self.copy_root) in value:
                raise LmrError(f"cannot carry `ENV {args}`: it names the task folder outside the repository, which "
                               "no run holds")
            self.out.env.append(value)
            moved = " (a path in the repository, relative to the run's working directory: the repository)" \
                if value != self._expand(args) else ""
            self.out.said.append(f"carried ENV {value}{moved}")
        elif word == "COPY" and args.split()[-1:] and "." in args.split()[:-1]:
            dest = self.cwd / self._expand(args.split()[-1])
            self.copy_root = PurePosixPath("/" + "/".join(_normalize(dest.parts)))
        elif word == "RUN":
            workdir = self.cwd  # a `cd` lasts for its RUN only
            for step in re.split(r"\s*(?:&&|;)\s*", args):
                if step.strip():
                    self.step(re.sub(r"\s+", " ", step.strip()))
            self.cwd = workdir

    def step(self, step: str) -> None:
        try:
            words = shlex.split(step)
        except ValueError:
            words = step.split()
        if not words:
            return
        if words[0] == "cd" and len(words) == 2:
            self.cwd = self.cwd / self._expand(words[1])
            return
        if words[0] == "pip" or words[0].endswith("/pip") or words[:3] in (["python", "-m", "pip"],
                                                                                ["python3", "-m", "pip"]):
            rest = words[1:] if words[0] != "python" and words[0] != "python3" else words[3:]
            if rest[:1] == ["install"]:
                self.pip(step, rest[1:])
                return
        if _OFFICIAL.search(step):
            return  # the official runner's user and log folder: lmrbench makes its own
        if re.search(r"\$\{?DIR\b|/workspace", step):
            raise LmrError(f"cannot carry the step `{step}`: it reads the task's files, which lmrbench's image "
                           "does not hold (the repository is copied in for each run)")
        self.out.shell.append(step)
        self.out.said.append(f"carried `{step}`")

    def pip(self, step: str, args: list[str]) -> None:
        k = 0
        specs: list[str] = []
        while k < len(args):
            a = args[k]
            if a in _PIP_QUIET:
                k += 1
                continue
            if a in ("-r", "--requirement") and k + 1 < len(args):
                self.requirements_file(step, args[k + 1])
                k += 2
                continue
            if a in ("-e", "--editable") and k + 1 < len(args):
                self.editable(step, args[k + 1])
                k += 2
                continue
            if a.startswith("-"):
                raise LmrError(f"cannot carry the step `{step}`: pip option {a} (lmrbench resolves the requirements "
                               "with their dependencies from its own index settings)")
            if a.startswith((".", "/")) or "/" in a and not re.match(r"^[\w.\-\[\],]+ ?(@|$)", a):
                raise LmrError(f"cannot carry the step `{step}`: {a} is a local path; install a folder of the "
                               "repository with `pip install -e`")
            specs.append(a)
            k += 1
        names = {re.split(r"[<>=!~\[ ;@]", s, maxsplit=1)[0].lower() for s in specs}
        if specs and not names <= _TOOLING:
            self.out.requirements += specs
            self.out.said.append(f"carried `pip install {' '.join(specs)}` into the requirements")

    def requirements_file(self, step: str, path: str) -> None:
        rel = self._task_path(path)
        file = self.task_dir / rel if rel is not None else None
        if file is None or not file.is_file():
            raise LmrError(f"cannot carry the step `{step}`: {path} is not a file of the task")
        lines = [ln.split(" #", 1)[0].strip() for ln in file.read_text(errors="replace").splitlines()]
        self.out.requirements += [ln for ln in lines if ln and not ln.startswith("#")]
        self.out.said.append(f"carried the requirements of {rel}")

    def editable(self, step: str, path: str) -> None:
        rel = self._task_path(path)
        repo_rel = _under(rel, self.repo) if rel is not None else None
        if repo_rel is None or not (self.task_dir / self.repo / repo_rel).is_dir():
            raise LmrError(f"cannot carry the step `{step}`: {path} is not a folder of the repository")
        folder = self.task_dir / self.repo / repo_rel
        deps = package_requirements(folder)
        self.out.editable.append(repo_rel.as_posix())
        self.out.requirements += deps
        self.out.said.append(f"carried `pip install -e {path}`: {self.repo}/{repo_rel.as_posix()} is on the import "
                             "path of every run" + (f", its requirements {', '.join(deps)} added" if deps else ""))


def _normalize(parts: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for p in parts:
        if p in ("/", "", "."):
            continue
        if p == "..":
            if out:
                out.pop()
        else:
            out.append(p)
    return out


def _under(rel: PurePosixPath, repo: str) -> PurePosixPath | None:
    try:
        return rel.relative_to(repo)
    except ValueError:
        return None


def package_requirements(folder: Path) -> list[str]:
    """The requirements a package folder declares: ``install_requires`` of its setup.py (a list of strings
    written out), or ``[project] dependencies`` of its pyproject.toml."""
    import tomllib

    pyproject = folder / "pyproject.toml"
    if pyproject.is_file():
        try:
            deps = tomllib.loads(pyproject.read_text(errors="replace")).get("project", {}).get("dependencies", [])
            if isinstance(deps, list) and all(isinstance(d, str) for d in deps):
                return list(deps)
        except tomllib.TOMLDecodeError as exc:
            raise LmrError(f"cannot read its dependencies: {exc}", pyproject) from None
    setup = folder / "setup.py"
    if setup.is_file():
        try:
            tree = pyparse.parse(setup.read_text(errors="replace"))
        except SyntaxError as exc:
            raise LmrError(f"cannot read its install_requires: {exc}", setup) from None
        for node in ast.walk(tree):
            if isinstance(node, ast.keyword) and node.arg == "install_requires":
                if isinstance(node.value, ast.List | ast.Tuple) and all(
                        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.value.elts):
                    return [e.value for e in node.value.elts]  # type: ignore[attr-defined]
                raise LmrError("install_requires is not a list of strings written out: list them in the task's "
                               "requirements.txt", setup)
    return []


def read_original(text: str, task_dir: Path, repo: str) -> Carried:
    """What the Dockerfile ``text`` of the task in ``task_dir`` installs; LmrError naming the first step that
    cannot be carried."""
    reader = _Reader(task_dir, repo)
    torch = None
    for word, args in _instructions(text):
        if word == "FROM" and (m := re.match(r"pytorch/pytorch:(\d+\.\d+(?:\.\d+)?)", args)):
            torch = m.group(1)
        reader.instruction(word, args)
    out = reader.out
    if torch and not any(re.match(r"torch\b(?!vision|audio|text)", r, re.IGNORECASE) for r in out.requirements):
        out.torch = torch
    return out


def torch_note(torch: str, requirements: Path, written: bool) -> str:
    """The note on the FROM image's torch ``torch``, naming the requirements file the task's build reads
    (``written``: the one the carry wrote; else one that exists, or the one to make)."""
    which = "written now" if written else "the one the build reads" if requirements.is_file() else "a new file"
    return (f"note: the FROM image held torch {torch}, which no requirement names: add torch=={torch} to "
            f"{requirements} ({which}) if the task's code needs it (the framework layer takes it from PyPI, with "
            "the numpy its wheels were built against)")


def carried_instructions(carried: Carried) -> str:
    """The Dockerfile lines that carry ``carried``'s shell steps, editable folders and ENV (root, before the
    image's user)."""
    lines = []
    steps = list(carried.shell)
    if carried.editable:
        pth = base64.b64encode(PTH_TEXT.encode()).decode()
        steps.append(f"echo {pth} | base64 -d > \"$(/opt/venv/bin/python -c 'import sysconfig; "
                     f"print(sysconfig.get_paths()[\"purelib\"])')/lmrbench_editable.pth\"")
        lines.append(f"ENV {EDITABLE_ENV}={':'.join(carried.editable)}")
    if steps:
        lines.append("RUN " + " \\\n && ".join(steps))
    lines += [f"ENV {e}" for e in carried.env]
    return "\n".join(lines) + ("\n" if lines else "")
