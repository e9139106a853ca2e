"""Task Dockerfiles: the official build args, BASE_IMAGE, requirements only; official ones still accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.tasks import Impl, write_task
from lmrbench.authoring.check.dockerfile import (
    copies_task_folder,
    dockerfile_warnings,
    edited,
    is_generated,
    render_dockerfile,
    write_dockerfile,
)
from lmrbench.errors import LmrError

OFFICIAL = """FROM pytorch/pytorch:2.1.0-cuda11.8-cudnn8-runtime
ARG UID
ARG GID
ARG DIR
WORKDIR /workspace
COPY . .
RUN pip install -r ${DIR}/requirements.txt
"""


def _task(root: Path, name: str = "3-Tiny") -> Path:
    goal = "def f():\n    return 1\n"
    test = "from m import f\n\n\ndef test_f():\n    assert f() == 1\n"
    return write_task(root, name, repo="repo", goal_file="m.py", goal=goal, golden=goal,
                      impls=[Impl("f", "unit_test/test_m.py")], files={"unit_test/test_m.py": test})


def test_generated_dockerfile_takes_the_build_args_and_copies_no_task_file(tmp_path):
    task = _task(tmp_path)
    (task / "repo" / "requirements.txt").write_text("numpy\n")
    text = write_dockerfile(task, "repo")[0].read_text()
    assert "ARG BASE_IMAGE=python:3.11-slim\nFROM ${BASE_IMAGE} AS install\n" in text
    assert "\nFROM ${BASE_IMAGE}\n" in text  # the image itself starts again from the parent
    declared = {w.split("=")[0] for ln in text.splitlines() if ln.startswith("ARG ") for w in ln.split()[1:]}
    assert declared == {"BASE_IMAGE", "UID", "GID", "DIR"}
    copies = [line for line in text.splitlines() if line.startswith("COPY")]
    # the wheels go to the install stage only; the image gets what their installation added to /opt/venv
    assert copies == ["COPY requirements.txt wheels/ /tmp/lmrbench/", "COPY --from=install /opt/lmrbench-layer/ /"]
    assert "--no-index --find-links" in text and "repo/requirements.txt" in text
    assert is_generated(text) and dockerfile_warnings(text) == [] and not copies_task_folder(text)


def test_an_official_dockerfile_is_kept_and_its_copy_of_the_task_folder_is_warned(tmp_path):
    task = _task(tmp_path)
    (task / "Dockerfile").write_text(OFFICIAL)
    with pytest.raises(LmrError, match="not written by lmrbench"):
        write_dockerfile(task, "repo")
    assert (task / "Dockerfile").read_text() == OFFICIAL
    warnings = dockerfile_warnings(OFFICIAL, task / "Dockerfile")
    assert any("golden files" in w and str(task / "Dockerfile") in w for w in warnings)
    assert any("no ARG BASE_IMAGE" in w for w in warnings)
    (task / "repo" / "requirements.txt").write_text("numpy\n")
    write_dockerfile(task, "repo", force=True)
    assert is_generated((task / "Dockerfile").read_text())


@pytest.mark.parametrize(
    ("line", "copies"),
    [
        ("COPY . .", True),
        ("COPY ./ /workspace/", True),
        ("ADD . /app", True),
        ("COPY --chown=1000 . .", True),
        ("COPY requirements.txt .", False),
        ('COPY ["a.txt", "/b"]', False),
        ("COPY repo/ /workspace/repo", False),
    ],
)
def test_copy_of_the_whole_context_is_recognised(line, copies):
    assert copies_task_folder(f"FROM x\n{line}\n") is copies


def test_bad_inputs_name_the_path(tmp_path):
    task = _task(tmp_path)
    with pytest.raises(LmrError, match="repo folder 'nope' does not exist"):
        write_dockerfile(task, "nope")
    with pytest.raises(LmrError, match="requirements file does not exist"):
        write_dockerfile(task, "repo", "missing.txt")
    assert not (task / "Dockerfile").exists()


def test_an_edit_of_the_instructions_is_told_from_a_file_as_written():
    text = render_dockerfile(base_image="lmrbench-base:bookworm", requirements="repo/requirements.txt")
    assert not edited(text)
    assert not edited(text.replace("# Two stages", "# Two build stages").replace("bookworm", "trixie"))
    assert edited(text + "RUN apt-get install -y libsndfile1\n")
    older = "\n".join(line for line in text.splitlines() if not line.startswith("# body "))
    assert not edited(older + "\nRUN true\n")  # written before the digest: the template, as before
