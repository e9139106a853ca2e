"""info.json read strictly: every key lmrbench reads is a field of the schema, and a key in the wrong place is
one line that says where it belongs."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from helpers.official_quirks import write_quirky_bench
from helpers.planted_set import write_planted_set
from helpers.run_task import write_taskset
from helpers.small_task import write_task
from lmrbench.errors import LmrError
from lmrbench.schemas.task_info import Implementation, TaskInfo, load_task_info

ROOT = Path(__file__).resolve().parents[2]
KNOWN_EXTRA_READS: set[str] = set()
"""Keys read through ``model_extra``: none, since every key lmrbench reads is a schema field."""


def _info(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "info.json"
    path.write_text(json.dumps(data))
    return path


BASE = {"instance_id": 1, "repo_folder_name": "repo", "implementations": [{"index": 1, "goal_file": "a.py"}]}


def test_isolation_at_the_top_level_is_one_line_that_says_where_it_belongs(tmp_path):
    path = _info(tmp_path, {**BASE, "isolation": "shared"})
    with pytest.raises(LmrError) as err:
        load_task_info(path)
    text = str(err.value)
    assert "\n" not in text and text.startswith(str(path))
    assert "'isolation' is at the top level" in text and "implementations[0].isolation" in text


def test_trusted_files_at_the_top_level_is_refused_since_the_checker_and_grader_read_each_implementations(tmp_path):
    path = _info(tmp_path, {**BASE, "trusted_files": ["tensors"]})
    with pytest.raises(LmrError) as err:
        load_task_info(path)
    assert "\n" not in str(err.value) and "implementations[0].trusted_files" in str(err.value)


def test_a_task_key_inside_an_implementation_says_it_belongs_at_the_top(tmp_path):
    impl = {"index": 1, "goal_file": "a.py", "resources": {"memory": "8g"}}
    with pytest.raises(LmrError, match=r"implementations\.0: 'resources' is in an implementation.*top level"):
        load_task_info(_info(tmp_path, {**BASE, "implementations": [impl]}))


def test_both_spellings_of_the_retrieval_list_at_once_are_refused(tmp_path):
    impl = {"index": 1, "goal_file": "a.py", "retrieval_content": ["a.py"], "retrieval_context": ["b.py"]}
    with pytest.raises(LmrError, match="keep one"):
        load_task_info(_info(tmp_path, {**BASE, "implementations": [impl]}))


def test_the_schema_names_the_official_spelling_of_the_retrieval_list():
    props = json.loads((ROOT / "schema" / "info.schema.json").read_text())["$defs"]["Implementation"]["properties"]
    assert "retrieval_content" in props and "retrieval_context" in props
    assert props["retrieval_content"]["type"] == props["retrieval_context"]["type"] == "array"


def _info_files(tmp_path: Path) -> list[Path]:
    """Every info.json of the examples and of the task sets the tests write."""
    write_task(tmp_path / "small")
    write_taskset(tmp_path / "run")
    write_quirky_bench(tmp_path / "quirks")
    write_planted_set(tmp_path / "planted")
    shutil.copy(ROOT / "tests" / "schemas" / "data" / "appendix_e_dpo_info.json", tmp_path / "appendix.json")
    return [*sorted((ROOT / "examples").rglob("info.json")), *sorted(tmp_path.rglob("info.json")),
            tmp_path / "appendix.json"]


def test_lmrbench_reads_no_key_of_info_json_that_the_schema_does_not_declare(tmp_path, monkeypatch):
    """Every fixture and example info.json loads; checking and trusting each task reads no key through
    ``model_extra``; no module outside the schema touches pydantic's extras directly."""
    from lmrbench.authoring.check.check import task_findings
    from lmrbench.benchmark.validation.not_run import static_not_run
    from lmrbench.core.taskset import load_task
    from lmrbench.core.trust import isolation_of, trusted_paths

    reads: list[tuple[str, str]] = []

    class Watched(dict):
        def __init__(self, owner: str, data: dict) -> None:
            super().__init__(data)
            self.owner = owner

        def get(self, key, default=None):
            reads.append((self.owner, key))
            return super().get(key, default)

        def __getitem__(self, key):
            reads.append((self.owner, key))
            return super().__getitem__(key)

        def __contains__(self, key):
            reads.append((self.owner, key))
            return super().__contains__(key)

        def __bool__(self) -> bool:  # ``model_extra or {}`` reads through it too
            return True

    for model in (TaskInfo, Implementation):
        monkeypatch.setattr(model, "model_extra", property(
            lambda self, _m=model.__name__: Watched(_m, self.__pydantic_extra__ or {})))

    (TaskInfo.model_validate(BASE).model_extra or {}).get("probe")
    assert reads == [("TaskInfo", "probe")]  # the watch sees a read
    reads.clear()
    files = _info_files(tmp_path)
    assert len(files) > 20
    refused = []
    for path in files:
        try:
            info = load_task_info(path)
        except LmrError:
            refused.append(path.parent.name)
            continue
        info.to_json_dict()
        if not (path.parent / info.repo_folder_name).is_dir():
            continue
        task = load_task(path.parent)
        trusted_paths(task)
        task_findings(task)
        for impl in task.info.implementations:
            isolation_of(task, impl)
            static_not_run(task, impl)
    assert refused == ["05-Broken"]  # the one broken on purpose
    assert {key for _owner, key in reads} <= KNOWN_EXTRA_READS, reads

    touched = [p.relative_to(ROOT).as_posix() for p in (ROOT / "src" / "lmrbench").rglob("*.py")
               if re.search(r"__pydantic_extra__", p.read_text()) and p.name != "task_info.py"]
    assert touched == []
