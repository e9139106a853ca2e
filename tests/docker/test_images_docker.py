"""The bootstrapped base image and the images CLI against the engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from lmrbench.benchmark.sandbox.images import BASE_IMAGE_TAG, BASE_LABEL, bootstrap_base_image, list_images
from lmrbench.cli.main import app
from lmrbench.errors import LmrError


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
    res = CliRunner().invoke(app, ["images", "bootstrap", "--tag", base_image])
    assert res.exit_code == 0 and f"reused {base_image}" in res.output
    res = CliRunner().invoke(app, ["images", "list"])
    assert res.exit_code == 0 and base_image in res.output
    assert base_image in [t for t, _, _ in list_images()]


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
def test_prune_removes_task_images_but_keeps_the_base(base_image, docker_engine):
    from lmrbench.benchmark.sandbox.images import prune_task_images

    docker_engine.images.get(base_image).tag("lmrbench-task-zz-prunetest", "one")
    removed, busy = prune_task_images(docker_engine, prefix="lmrbench-task-zz-prunetest")
    assert removed == ["lmrbench-task-zz-prunetest:one"] and busy == []
    assert [t for t, _, _ in list_images() if t.startswith("lmrbench-task-zz-")] == []
    assert docker_engine.images.get(base_image)


@pytest.mark.docker
def test_images_cli_writes_a_dockerfile_and_builds_the_task_image(base_image, tmp_path):
    from helpers.vec_task import write_small_task

    task = write_small_task(tmp_path, dockerfile=False)
    (task.path / "Dockerfile").write_text("FROM pytorch/pytorch:2.1.0\nCOPY . .\n")
    res = CliRunner().invoke(app, ["images", "dockerfile", str(task.path)])
    assert res.exit_code != 0 and "not written by lmrbench" in str(res.exception)
    res = CliRunner().invoke(app, ["images", "dockerfile", str(task.path), "--force"])
    assert res.exit_code == 0 and "wrote" in res.output
    assert "COPY . ." not in (task.path / "Dockerfile").read_text()
    res = CliRunner().invoke(app, ["images", "build", str(tmp_path), "--base", base_image])
    assert res.exit_code == 0, res.output
    assert "7-Vec: lmrbench-task-7-vec:" in res.output
