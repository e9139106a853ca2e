"""Usage errors of the installed ``lmrbench`` script: one line plus the help hint, never a traceback."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _script() -> str:
    """The console script installed beside this interpreter (as a user's shell finds it)."""
    found = Path(sys.executable).with_name("lmrbench")
    if found.is_file():
        return str(found)
    on_path = shutil.which("lmrbench")
    assert on_path, "the lmrbench console script is not installed"
    return on_path


@pytest.mark.parametrize(
    ("args", "problem", "hint"),
    [
        (["validate"], "Missing argument 'bench'", "lmrbench validate --help"),
        (["lables"], "No such command 'lables'", "lmrbench --help"),
        (["evaluate", "a", "b", "--jobs", "x"], "'--jobs'", "lmrbench evaluate --help"),
        (["task", "new", "--bogus"], "--bogus", "lmrbench task new --help"),
    ],
)
def test_usage_error_is_one_line_and_the_hint(args: list[str], problem: str, hint: str) -> None:
    out = subprocess.run([_script(), *args], capture_output=True, text=True, timeout=120)
    lines = [ln for ln in out.stderr.splitlines() if ln.strip()]
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    assert len(lines) == 2, out.stderr
    assert lines[0].startswith("error: ") and problem in lines[0]
    assert hint in lines[1]


def test_help_keeps_the_extras_it_names() -> None:
    """Help text is rich markup: an unescaped ``lmrbench[plots]`` printed as ``lmrbench``, naming no extra."""
    out = subprocess.run([_script(), "report", "--help"], capture_output=True, text=True, check=True,
                         env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"}).stdout
    assert "needs lmrbench[plots]" in out


@pytest.mark.parametrize(("args", "problem"), [
    (["--function", "bad"], "must look like FILE::name"),
    (["--function", "a.py::f", "--name", "7 DPO"], "must look like N-Name"),
    (["--function", "a.py::f", "--paper-url", "papers/dpo.txt"], "must be an http(s) URL"),
])
def test_wrong_options_of_task_new_are_refused_before_the_parsers_load(args: list[str], problem: str) -> None:
    """``task new`` checks its arguments before it imports PyMuPDF, LibCST and GitPython (about 1 s of CPU)."""
    probe = (
        "import sys\n"
        "from lmrbench.cli.main import main\n"
        f"sys.argv = ['lmrbench', 'task', 'new', '--repo', '/nonexistent', *{args!r}, '--instruction', 'x',"
        " '/nonexistent-out']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'pymupdf', 'fitz', 'libcst', 'git'})\n"
        "print(code, heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "2 []", out.stdout + out.stderr
    assert problem in out.stderr
