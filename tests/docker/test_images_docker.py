"""The bootstrapped base image and the images CLI against the engine."""

from __future__ import annotations

import contextlib
from pathlib import Path

import docker
import pytest
from typer.testing import CliRunner

from helpers.progress_lines import Lines
from helpers.vec_task import unique_requirement, write_small_task
from lmrbench.benchmark.sandbox.environments.images import BASE_IMAGE_TAG, BASE_LABEL, bootstrap_base_image
from lmrbench.cli.main import app
from lmrbench.errors import LmrError
from lmrbench.harness.request import SandboxRequest
from lmrbench.harness.sandbox import Sandbox


@pytest.mark.docker
def test_bootstrap_reuses_the_existing_image(base_image, docker_engine):
    again = bootstrap_base_image(base_image)
    assert not again.created and again.image_id == docker_engine.images.get(base_image).id
    out = docker_engine.containers.run(
        base_image,
        ["python", "-c", "import sys, pytest; print(sys.prefix, sys.version_info[:2], pytest.__name__)"],
        remove=True,
        network_disabled=True,
    )
    assert out.decode().split()[0] == "/opt/venv" and "(3, 11)" in out.decode()
    assert docker_engine.images.get(base_image).labels.get(BASE_LABEL) == "1"


@pytest.mark.docker
def test_images_cli_says_what_it_did(base_image):
    res = CliRunner().invoke(app, ["image", "bootstrap", "--tag", base_image])
    assert res.exit_code == 0 and f"reused {base_image}" in res.output
    res = CliRunner().invoke(app, ["image", "list"])
    assert res.exit_code == 0 and base_image in res.output


@pytest.mark.docker
def test_bootstrap_without_mmdebstrap_or_debootstrap_says_what_to_install(
    docker_engine, tmp_path, monkeypatch
):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("LMRBENCH_CACHE", str(Path.home() / ".cache" / "lmrbench"))
    with pytest.raises(LmrError, match="apt-get install mmdebstrap"):
        bootstrap_base_image("lmrbench-base:never-made", progress=None)
    assert BASE_IMAGE_TAG.startswith("lmrbench-base:")


@pytest.mark.docker
def test_tasks_of_one_environment_share_one_image_and_prune_keeps_it_for_the_task_set(
    base_image, docker_engine, tmp_path
):
    from lmrbench.benchmark.sandbox.environments.inventory import inventory, keep_for
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner

    requirement = unique_requirement("iniconfig")  # inputs no other test has; the folder names differ
    first = write_small_task(tmp_path / "a", name="7-ShareA", repo="first", requirements=requirement)
    second = write_small_task(tmp_path / "b", name="7-ShareB", repo="second", requirements=requirement)
    runner, built, shared = Sandbox(DockerRunner(base_image=base_image)), Lines(), Lines()
    tag_a = runner.prepare(first, progress=built)
    tag_b = runner.prepare(second, progress=shared)
    try:
        assert tag_a != tag_b and docker_engine.images.get(tag_a).id == docker_engine.images.get(tag_b).id
        assert any(line.startswith(f"building {tag_a}") for line in built.lines), built.lines
        assert not any(line.startswith("building") for line in shared.lines), shared.lines
        assert f"{tag_b}: the image of {tag_a}, whose environment is the same" in shared.lines
        res = runner.run(SandboxRequest(second, second.repo_dir,
                                        ["python", "-c", "import iniconfig, os; print(os.getcwd())"], 120))
        assert res.exit_code == 0, res.output
        rows = [r for r in inventory(docker_engine) if r.tag in (tag_a, tag_b)]
        assert sorted(r.task for r in rows) == ["7-ShareA", "7-shareb"]  # the second named by its tag
        keep = keep_for(inventory(docker_engine), {"7-ShareB"})  # what `images prune` keeps for that task set
        assert tag_b in keep and tag_a not in keep
    finally:
        for tag in (tag_a, tag_b):
            with contextlib.suppress(docker.errors.ImageNotFound):
                docker_engine.images.remove(tag)


@pytest.mark.docker
def test_images_cli_writes_a_dockerfile_and_builds_the_task_image(base_image, tmp_path):
    from helpers.vec_task import write_small_task

    task = write_small_task(tmp_path, dockerfile=False)
    (task.path / "Dockerfile").write_text("FROM pytorch/pytorch:2.1.0\nCOPY . .\n")
    res = CliRunner().invoke(app, ["image", "dockerfile", str(task.path)])
    assert res.exit_code != 0 and "not written by lmrbench" in str(res.exception)
    res = CliRunner().invoke(app, ["image", "dockerfile", str(task.path), "--force"])
    assert res.exit_code == 0 and "wrote" in res.output
    assert "COPY . ." not in (task.path / "Dockerfile").read_text()
    res = CliRunner().invoke(app, ["image", "build", str(tmp_path), "--base", base_image])
    assert res.exit_code == 0, res.output
    assert "7-Vec: lmrbench-task-7-vec:" in res.output


@pytest.mark.docker
def test_a_new_image_of_a_task_removes_the_ones_it_replaces_but_not_another_tasks(docker_engine, base_image,
                                                                                  tmp_path):
    """A task's new image removes its older ones, those of its folder before a move or a rename (the app renames a
    draft after its tests were recorded: the old name's image was left, 5.9 GB under a name no task has), and
    keeps another task's tag of the same image and the images of another copy of the task set."""
    import io

    from lmrbench.benchmark.sandbox.environments.inventory import remove_superseded
    from lmrbench.benchmark.sandbox.environments.layers import TASK_PATH_LABEL

    def labelled(tag: str, folder: Path) -> None:
        text = f'FROM {base_image}\nLABEL {TASK_PATH_LABEL}="{folder.resolve()}"\n'
        docker_engine.images.build(fileobj=io.BytesIO(text.encode()), tag=tag, rm=True)

    mine, copy = tmp_path / "bench" / "9-Superseded", tmp_path / "copy" / "9-Superseded"
    before_rename, moved_from = tmp_path / "bench" / "zz", tmp_path / "drafts" / "9-Superseded"
    other_task = tmp_path / "bench" / "9-Other"
    for folder in (mine, copy, other_task):
        folder.mkdir(parents=True)
    old, new, other, elsewhere = ("lmrbench-task-9-superseded:old", "lmrbench-task-9-superseded:new",
                                  "lmrbench-task-9-other:same", "lmrbench-task-9-superseded:copy")
    renamed, moved = "lmrbench-task-zz:draft", "lmrbench-task-9-superseded:draft"
    tags = (old, new, other, elsewhere, renamed, moved)
    try:
        labelled(old, mine)
        labelled(new, mine)
        labelled(elsewhere, copy)  # the same task name in another folder (another copy of the set)
        labelled(renamed, before_rename)  # built before the task's folder was renamed from zz: gone now
        labelled(moved, moved_from)  # built for the draft before it was saved into the set: gone now
        docker_engine.images.get(old).tag(*other.split(":"))  # another task's tag of the old image
        docker_engine.images.get(renamed).tag(*other.split(":")[:1], "renamed")  # and of the renamed one
        assert remove_superseded(docker_engine, new, mine) == sorted([old, renamed, moved])
        left = {t for img in docker_engine.images.list() for t in img.tags}
        assert {new, other, elsewhere, "lmrbench-task-9-other:renamed"} <= left  # another task's tags stay
        assert not {old, renamed, moved} & left
        assert remove_superseded(docker_engine, base_image, mine) == []  # not a task image: nothing to do
    finally:
        for tag in (*tags, "lmrbench-task-9-other:renamed"):
            with contextlib.suppress(docker.errors.ImageNotFound):
                docker_engine.images.remove(tag)
