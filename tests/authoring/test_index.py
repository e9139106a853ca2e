"""The function index of a source and of a repository."""

from __future__ import annotations

import threading

import pytest

from lmrbench.core.source.index import FunctionInfo, index_repo, index_repo_report, index_source
from lmrbench.errors import LmrError
from lmrbench.progress import Cancelled

SOURCE = '''"""Module."""
import functools
import typing


def top(x):
    def inner(y):
        class Local:
            def m(self):
                return y
        return Local
    return inner


class Outer:
    class Inner:
        async def am(self):
            return 1

    @property
    def size(self):
        return self._size

    @size.setter
    def size(self, value):
        self._size = value

    @functools.cached_property
    def cached(self):
        return 2

    @typing.overload
    def conv(self, x: int) -> int: ...
    @typing.overload
    def conv(self, x: str) -> str: ...
    def conv(self, x):
        return x

    if typing.TYPE_CHECKING:
        def checked(self): ...
    else:
        try:
            def checked(self):
                return 3
        except ImportError:
            pass


@functools.lru_cache(maxsize=2)
@staticmethod
def one_line(a): return a
'''


def by_name(infos: list[FunctionInfo]) -> dict[str, list[FunctionInfo]]:
    out: dict[str, list[FunctionInfo]] = {}
    for info in infos:
        out.setdefault(info.qualname, []).append(info)
    return out


def test_qualified_names_and_flags():
    infos = index_source(SOURCE, "pkg/mod.py")
    assert [i.qualname for i in infos] == [
        "top", "top.inner", "top.inner.Local.m", "Outer.Inner.am", "Outer.size", "Outer.size.setter",
        "Outer.cached", "Outer.conv", "Outer.conv", "Outer.conv", "Outer.checked",
        "Outer.checked", "one_line",
    ]
    names = by_name(infos)
    m = names["top.inner.Local.m"][0]
    assert (m.class_name, m.is_method, m.is_nested) == ("Local", True, True)
    inner = names["top.inner"][0]
    assert (inner.is_method, inner.is_nested, inner.class_name) == (False, True, "")
    am = names["Outer.Inner.am"][0]
    assert (am.is_async, am.is_method, am.class_name, am.name) == (True, True, "Inner", "am")
    props = names["Outer.size"] + names["Outer.size.setter"] + names["Outer.cached"]
    assert all(i.is_property for i in props)
    assert names["Outer.size.setter"][0].name == "size"
    assert [i.is_overload for i in names["Outer.conv"]] == [True, True, False]
    assert not names["top"][0].is_property and not names["top"][0].is_method


def test_line_range_includes_decorators():
    infos = by_name(index_source(SOURCE, "m.py"))
    top = infos["top"][0]
    assert (top.lineno, top.end_lineno, top.length) == (6, 12, 7)
    one = infos["one_line"][0]
    assert (one.lineno, one.end_lineno, one.length) == (49, 51, 3)
    assert one.decorators == ("functools.lru_cache(...)", "staticmethod")
    assert one.file == "m.py" and one.ref == "m.py::one_line"


def test_syntax_error_is_an_lmr_error():
    with pytest.raises(LmrError, match=r"^m\.py: syntax error at line 1:"):
        index_source("def (:\n", "m.py")


def make_repo(root):
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": "def a():\n    return 1\n",
        "pkg/sub/b.py": "class B:\n    def m(self):\n        pass\n",
        "bad_syntax.py": "def broken(:\n",
        "latin.py": b"x = '\xe9'\ndef f():\n    pass\n",
        "declared_latin.py": b"# -*- coding: latin-1 -*-\nx = '\xe9'\ndef g():\n    pass\n",
        ".git/hooks/h.py": "def hook(): pass\n",
        ".venv/lib/x.py": "def v(): pass\n",
        "myenv/pyvenv.cfg": "home = /usr\n",
        "myenv/lib/site.py": "def s(): pass\n",
        "node_modules/n.py": "def n(): pass\n",
        "pkg/__pycache__/c.py": "def c(): pass\n",
        "build/lib/pkg/a.py": "def a(): pass\n",
        "dist/d.py": "def d(): pass\n",
        "pkg.egg-info/e.py": "def e(): pass\n",
        "notes.txt": "def not_python(): pass\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)


def test_index_repo_skips_tool_folders_and_reports_bad_files(tmp_path):
    make_repo(tmp_path)
    report = index_repo_report(tmp_path)
    assert [i.ref for i in report.functions] == [
        "declared_latin.py::g", "pkg/a.py::a", "pkg/sub/b.py::B.m",
    ]
    assert report.files == 6
    problems = sorted(str(p) for p in report.problems)
    assert problems[0].startswith("bad_syntax.py: syntax error at line 1:")
    assert problems[1].startswith("latin.py: not valid UTF-8")
    assert [i.qualname for i in index_repo(tmp_path)] == ["g", "a", "B.m"]


class ListProgress:
    def __init__(self):
        self.events = []

    def start(self, label, total):
        self.events.append(("start", total))

    def advance(self, n=1, detail=""):
        self.events.append(("advance", detail))

    def log(self, line):
        self.events.append(("log", line))


def test_index_repo_reports_progress_and_can_be_cancelled(tmp_path):
    make_repo(tmp_path)
    progress = ListProgress()
    index_repo(tmp_path, progress=progress)
    assert progress.events[0] == ("start", 6)
    assert [e[1] for e in progress.events[1:]] == [
        "bad_syntax.py", "declared_latin.py", "latin.py", "pkg/__init__.py", "pkg/a.py", "pkg/sub/b.py",
    ]
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        index_repo(tmp_path, cancel=cancel)


def test_index_repo_of_a_missing_folder(tmp_path):
    with pytest.raises(LmrError, match="not a folder"):
        index_repo(tmp_path / "nope")


def test_index_repo_leaves_the_garbage_collector_as_it_found_it(tmp_path):
    import gc

    make_repo(tmp_path)
    assert gc.isenabled()
    index_repo(tmp_path)
    assert gc.isenabled()
    gc.disable()
    try:
        index_repo(tmp_path)
        assert not gc.isenabled()
    finally:
        gc.enable()
