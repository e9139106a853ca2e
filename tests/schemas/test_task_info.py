"""info.json: official files load as they are, map their categories, and survive a round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lmrbench.errors import LmrError
from lmrbench.schemas import (
    Category,
    TaskInfo,
    category_from_text,
    load_task_info,
    parse_category,
    save_task_info,
)

DATA = Path(__file__).parent / "data"


def test_appendix_e_dpo_task_loads_and_round_trips_byte_for_byte(tmp_path: Path) -> None:
    src = DATA / "appendix_e_dpo_info.json"
    info = load_task_info(src)
    impl = info.implementation(1)
    assert (info.instance_id, info.repo_folder_name) == (1, "direct-preference-optimization")
    assert impl.goal_function == "preference_loss" and impl.class_name == ""
    assert impl.category_normalized is Category.TRAINING_OBJECTIVES
    assert impl.category == "Training Objectives & Optimization Techniques"
    save_task_info(info, tmp_path / "info.json")
    assert (tmp_path / "info.json").read_text() == src.read_text()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Training Objectives & Optimization Techniques", Category.TRAINING_OBJECTIVES),
        ("loss function", Category.TRAINING_OBJECTIVES),
        ("Evaluation Metrics & Benchmarking", Category.EVALUATION_METRICS),
        ("Data Augmentation & Generation", Category.DATA_AUGMENTATION),
        ("Neural Network Architectures & Modules", Category.ARCHITECTURES),
        ("Information Extraction & Knowledge Integration", Category.INFORMATION_EXTRACTION),
        ("Feature Learning and Representation", Category.FEATURE_LEARNING),
        ("decoding & search strategies", Category.DECODING),
        ("Prompt Engineering", Category.PROMPTING),
        ("Interpretability & Explainability", Category.INTERPRETABILITY),
        ("", None),
        (None, None),
    ],
)
def test_free_text_categories_map_onto_the_nine(text: str | None, expected: Category | None) -> None:
    assert category_from_text(text) is expected


def test_parse_category_rejects_nonsense_with_the_list_of_names() -> None:
    with pytest.raises(ValueError, match="Evaluation Metrics"):
        parse_category("astrology")


def _messy() -> dict:
    return {
        "instance_id": "7",
        "paper_name": "x",
        "repo_folder_name": "repo",
        "custom_top": {"kept": True},
        "implementations": [
            {"instruction": "do it", "index": 1, "goal_file": "a.py", "goal_function": "f",
             "golden_file": "golden_files/a_golden.py", "retrieval_content": ["b.py"],
             "unit_test_file": "unit_test/unit_test_1.py", "annotator": "someone"},
            {"instruction": "and this", "index": 2, "category": "", "goal_file": ["u/t1.py", "u/t2.py"],
             "golden_file": "g.py", "unit_test_file": ["u/t1.py", "u/t2.py"]},
        ],
    }


def test_messy_official_shapes_load_and_keep_unknown_keys_and_spellings(tmp_path: Path) -> None:
    path = tmp_path / "info.json"
    path.write_text(json.dumps(_messy(), indent=4))
    info = load_task_info(path)
    first, second = info.implementations
    assert info.instance_id == "7"
    assert first.retrieval_context == ["b.py"] and first.category is None and first.category_normalized is None
    assert second.goal_files == ["u/t1.py", "u/t2.py"] and second.category == ""
    save_task_info(info, path)
    again = json.loads(path.read_text())
    assert again == _messy()
    assert "retrieval_content" in again["implementations"][0] and "category" not in again["implementations"][0]


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d["implementations"][0].update(goal_file="../../etc/passwd"), "leaves the task folder"),
        (lambda d: d["implementations"][0].update(golden_file="/abs/g.py"), "absolute"),
        (lambda d: d.update(repo_folder_name=".."), "leaves the task folder"),
        (lambda d: d["implementations"][1].update(index=1), "appears twice"),
        (lambda d: d.pop("repo_folder_name"), "repo_folder_name"),
    ],
)
def test_bad_info_json_is_one_line_naming_the_file(tmp_path: Path, mutate, needle: str) -> None:
    data = _messy()
    mutate(data)
    path = tmp_path / "info.json"
    path.write_text(json.dumps(data))
    with pytest.raises(LmrError) as err:
        load_task_info(path)
    msg = str(err.value)
    assert "\n" not in msg and str(path) in msg and needle in msg


def test_invalid_json_and_missing_file_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "info.json").write_text('{"instance_id": 1,')
    with pytest.raises(LmrError, match=r"info.json: invalid JSON at line 1"):
        load_task_info(tmp_path)
    with pytest.raises(LmrError, match="no info.json"):
        load_task_info(tmp_path / "nowhere")


def test_new_task_info_writes_only_official_keys_when_additions_are_unset(tmp_path: Path) -> None:
    info = TaskInfo(instance_id=3, repo_folder_name="r", implementations=[
        {"index": 1, "goal_file": "a.py", "instruction": "i"}])
    save_task_info(info, tmp_path / "info.json")
    data = json.loads((tmp_path / "info.json").read_text())
    assert "upstream_commit" not in data and "checker" not in data["implementations"][0]
