"""Layered task images on the real engine: wheels for the image's own Python, a framework layer shared by the
tasks that pin it (a small stand-in project plays torch), no wheels in any layer, nothing left by a failed build,
and an unreachable FROM reported as one environment error."""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from pathlib import Path

import docker
import pytest
from typer.testing import CliRunner

from helpers.cancelling import cancel_once_running
from helpers.docker_engine import build_containers
from helpers.progress_lines import Lines
from helpers.vec_task import unique_requirement, write_small_task
from lmrbench.benchmark.sandbox.environments.inventory import inventory, keep_for
from lmrbench.benchmark.sandbox.environments.layers import FRAMEWORK_REPO, LAYER_LABEL, PARENT_LABEL
from lmrbench.benchmark.sandbox.environments.wheelhouse import WheelTarget, resolve_wheels, wheel_name
from lmrbench.benchmark.sandbox.running.docker import DockerRunner
from lmrbench.benchmark.sandbox.running.try_requirements import try_requirements
from lmrbench.cli.main import app
from lmrbench.errors import LmrError

pytestmark = [pytest.mark.docker, pytest.mark.long]



def _py(engine, tag: str, code: str) -> str:
    return engine.containers.run(tag, ["python", "-c", code], remove=True, network_disabled=True).decode().strip()


def _remove(engine, *tags: str) -> None:
    for tag in tags:
        with contextlib.suppress(Exception):
            engine.images.remove(tag)


def test_a_requirement_that_needs_a_newer_python_than_the_image_has_still_builds(tmp_path, base_image,
                                                                                docker_engine):
    """soupsieve's newest releases need Python >= 3.11.5; the base image has bookworm's 3.11.2."""
    runner = DockerRunner(base_image=base_image)
    image_py = runner.wheel_target(base_image)
    assert re.fullmatch(r"\d+\.\d+\.\d+", image_py.python)
    task = write_small_task(tmp_path / "bench", requirements="soupsieve\n", name="7-Soup")
    tag = runner.prepare(task)
    try:
        got = _py(docker_engine, tag, "import importlib.metadata as m; print(m.version('soupsieve'))")
        expected = next(v for n, v in map(wheel_name, resolve_wheels(["soupsieve"], image_py)) if n == "soupsieve")
        assert got == expected
    finally:
        _remove(docker_engine, tag)


def test_an_author_s_edit_of_the_generated_dockerfile_is_built(tmp_path, base_image, docker_engine):
    """The edited file is built by the classic builder; the unedited one in one commit from the same shell
    fragments: apart from the author's line the two images are the same environment."""
    runner = DockerRunner(base_image=base_image)
    plain = write_small_task(tmp_path / "plain", name="7-Edited", requirements="six==1.16.0\n")
    task = write_small_task(tmp_path / "bench", name="7-Edited", requirements="six==1.16.0\n")
    path = task.path / "Dockerfile"
    text = path.read_text()
    assert "\nWORKDIR /workspace\n" in text
    own = "RUN echo from-the-author > /etc/lmrbench-edit\n"
    path.write_text(text.replace("\nWORKDIR /workspace\n", f"\n{own}WORKDIR /workspace\n"))
    tags = [runner.prepare(task), runner.prepare(plain)]
    environment = ("import os, subprocess as s, importlib.metadata as m; "
                   "print(os.getuid(), os.getgid(), os.getcwd(), "
                   "sorted(os.environ.items() - {('HOSTNAME', os.uname()[1])}), "
                   "sorted((d.metadata['Name'], d.version) for d in m.distributions()), "
                   "[(p, os.stat(p).st_uid) for p in sorted(s.check_output(['find', '/workspace']).decode().split())], "
                   "open('/etc/passwd').read().splitlines()[-1])")
    try:
        assert tags[0] != tags[1]
        assert _py(docker_engine, tags[0], "print(open('/etc/lmrbench-edit').read())") == "from-the-author"
        built = [_py(docker_engine, tag, environment) for tag in tags]
        assert "'six', '1.16.0'" in built[1], built
        assert f"('/workspace', {runner.uid})" in built[1], built
        assert built[0] == built[1]
        configs = [docker_engine.images.get(tag).attrs["Config"] for tag in tags]
        keys = ("User", "WorkingDir", "Cmd", "Entrypoint")
        assert [[c[k] for k in keys] + sorted(c["Env"]) for c in configs[:1]] == [
            [c[k] for k in keys] + sorted(c["Env"]) for c in configs[1:]]
    finally:
        _remove(docker_engine, *tags)


def test_tasks_pinning_the_same_framework_share_its_layer_and_no_layer_holds_wheels(tmp_path, base_image,
                                                                                    docker_engine):
    runner = DockerRunner(base_image=base_image, framework_projects=frozenset({"iniconfig"}))
    a = write_small_task(tmp_path / "a", requirements="iniconfig==2.0.0\nsix==1.16.0\n", name="7-LayerA")
    b = write_small_task(tmp_path / "b", requirements="iniconfig==2.0.0\n", name="8-LayerB")
    tags = [runner.prepare(a), runner.prepare(b)]
    images = [docker_engine.images.get(t) for t in tags]
    parent = images[0].labels[PARENT_LABEL]
    try:
        assert parent.startswith(FRAMEWORK_REPO + ":") and images[1].labels[PARENT_LABEL] == parent
        framework = docker_engine.images.get(parent)
        assert framework.labels[LAYER_LABEL] == "framework"
        shared = framework.attrs["RootFS"]["Layers"]
        find_wheels = ("import os; print(sorted(os.path.join(d, f) for d, _, fs in os.walk('/') for f in fs "
                       "if f.endswith('.whl')))")
        debian_wheels = _py(docker_engine, base_image, find_wheels)  # pip's and setuptools' of python3-pip
        for img in images:  # the framework's layers are the task images' own lower layers: stored once
            assert img.attrs["RootFS"]["Layers"][: len(shared)] == shared
            assert len(img.attrs["RootFS"]["Layers"]) - len(shared) <= 2  # the task layer: files, then removals
            # the wheels were installed, then deleted before the commit
            assert _py(docker_engine, img.id, find_wheels) == debian_wheels
            assert img.attrs["Size"] - framework.attrs["Size"] < 1_000_000  # six installed, not its wheel too
        assert _py(docker_engine, tags[0], "import iniconfig, six; print(six.__version__)") == "1.16.0"
        assert _py(docker_engine, tags[1], "import importlib.util as u; print(u.find_spec('six') is None)") == "True"
        framework_files = _py(docker_engine, parent, "import iniconfig, pytest; print('ok')")
        assert framework_files == "ok"
        # what a run's manifest records of each task's environment: its image and the framework under it
        facts = runner.environment(b)  # the transport's environment says them
        image, framework = facts.image_id, facts.framework
        assert image == images[1].id and framework == "iniconfig==2.0.0 (PyPI (the CUDA build))"
        listed = {r.tag: r for r in inventory(docker_engine)}
        assert {"7-LayerA", "8-LayerB"} <= set(listed[parent].users)
        assert keep_for(list(listed.values()), {"8-LayerB"}) == {tags[1], parent}

        # a requirement change tried in a throwaway container of B's image: it installs, the command sees it,
        # and the image is unchanged
        tried = try_requirements(runner, b, ["six==1.16.0"], command="python -c 'import six; print(six.__version__)'")
        assert tried.ok and tried.image == tags[1] and "1.16.0" in tried.output, tried.output
        assert _py(docker_engine, tags[1], "import importlib.util as u; print(u.find_spec('six') is None)") == "True"
        bad = try_requirements(runner, b, ["six==1.16.0"], command="python -c 'import six, missing_module_xyz'")
        assert not bad.ok and "missing_module_xyz" in bad.headline
        # the command runs in the masked repository, read-only: it imports the goal module, writes nothing
        goal = try_requirements(runner, b, ["six==1.16.0"],
                                command="python -c 'import vec; print(vec.__file__)'; touch x || echo read-only")
        assert goal.ok and "/lmrbench-repo/vecrepo/vec.py" in goal.output and "read-only" in goal.output, goal.output
        assert not (b.repo_dir / "x").exists()
    finally:
        _remove(docker_engine, *tags, parent)


def test_a_failed_build_says_why_in_one_line_and_leaves_no_image_behind(tmp_path, base_image, docker_engine):
    task = write_small_task(tmp_path / "bench", name="7-Broken", dockerfile=False)
    (task.path / "Dockerfile").write_text(
        "ARG BASE_IMAGE\nFROM ${BASE_IMAGE}\nRUN echo kept > /step-one\n"
        "RUN echo 'E: Unable to locate package libfoo' && false\n"
    )
    progress = Lines()
    with pytest.raises(LmrError) as err:
        DockerRunner(base_image=base_image).prepare(task, progress=progress)
    assert "image build failed: E: Unable to locate package libfoo" in str(err.value)
    assert "\n" not in str(err.value)
    steps = [m.group(1) for line in progress.lines if (m := re.match(r"^ ---> ([0-9a-f]{12})$", line))]
    assert steps, progress.lines
    left = []
    for sid in steps:
        with contextlib.suppress(Exception):
            img = docker_engine.images.get(sid)
            if not img.tags and img.id != docker_engine.images.get(base_image).id:
                left.append(sid)
    assert left == []


def test_an_official_dockerfile_whose_from_cannot_be_had_is_one_environment_error_not_a_failed_golden(tmp_path):
    bench = tmp_path / "bench"
    task = write_small_task(bench, name="7-Official", dockerfile=False)
    (task.path / "Dockerfile").write_text(
        "FROM lmrbench-no-such-registry.invalid/pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime\n"
        "ARG DIR\nCOPY . /workspace\nRUN pip install -r /workspace/$DIR/requirements.txt\n"
    )
    res = CliRunner().invoke(app, ["validate", str(bench), "--sandbox", "docker", "--repeat", "3"])
    assert res.exit_code == 3  # could not run, not invalid
    env_lines = [line for line in res.output.splitlines() if line.startswith("not run 7-Official#1:")]
    assert len(env_lines) == 1, res.output
    assert "cannot be pulled" in env_lines[0] and "lmrbench image dockerfile" in env_lines[0]
    assert "0/3" not in res.output and "0.0%" not in res.output
    assert "golden pass rate: 0/0 that ran; 1 not run: 1 FROM images that cannot be had" in res.output
    assert "Step " not in res.output
    summary = json.loads((bench / ".lmrbench" / "validate" / "summary.json").read_text())
    [row] = summary["rows"]
    assert "cannot be pulled" in row["environment_error"] and summary["golden_pass_rate"] is None
    assert row["not_run"]["cause"] == "image" and row["verdict"] == "not run"


def test_the_target_of_the_base_image_is_its_full_python_version(base_image):
    target = DockerRunner(base_image=base_image).wheel_target(base_image)
    assert target == WheelTarget(python=target.python, glibc=target.glibc, machine=target.machine)
    assert target.python.count(".") == 2 and target.minor == ".".join(target.python.split(".")[:2])


def test_a_build_cancelled_mid_install_leaves_no_container_and_no_image(tmp_path, base_image, docker_engine):
    from lmrbench.progress import Cancelled

    runner = DockerRunner(base_image=base_image)
    task = write_small_task(tmp_path / "bench", name="7-Cancelled", requirements="numpy\n")
    tag = runner.prepare(task)
    first = docker_engine.images.get(tag).id
    ended = cancel_once_running(lambda cancel: runner.prepare(task, rebuild=True, cancel=cancel),
                                lambda: build_containers(docker_engine))
    assert isinstance(ended, Cancelled), ended
    assert build_containers(docker_engine) == []
    assert docker_engine.images.get(tag).id == first  # nothing was committed over it


def test_a_failed_install_says_why_in_one_line_and_leaves_no_container(base_image, docker_engine):
    from lmrbench.benchmark.sandbox.environments.commit_build import commit_build

    tag = "lmrbench-task-7-unresolvable:test"
    with pytest.raises(LmrError) as err:  # no wheel was put in for it: pip, offline, cannot find it
        commit_build(docker_engine, base_image, tag, requirements=["no-such-project-xyz==1.0"], wheels=[],
                     user=(1000, 1000), labels={}, what="7-Unresolvable")
    # the line names the requirement that cannot be satisfied, not pip's first headline
    assert str(err.value).startswith("7-Unresolvable: image build failed: ERROR: No matching distribution found for "
                                     "no-such-project-xyz==1.0"), err.value
    assert "\n" not in str(err.value)
    assert build_containers(docker_engine) == []
    with pytest.raises(docker.errors.ImageNotFound):
        docker_engine.images.get(tag)


def test_two_processes_that_need_the_same_new_image_build_it_once(tmp_path, base_image, docker_engine):
    # a requirement line of its own (a marker that always holds): an image no other test (nor an earlier run) has
    task = write_small_task(tmp_path / "bench", name="7-Twice", requirements=unique_requirement("iniconfig==2.0.0"))
    exe = str(Path(sys.executable).with_name("lmrbench"))
    procs = [subprocess.Popen([exe, "--verbose", "image", "build", str(task.path.parent)], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    tags = {m.group(1) for out in outs for m in re.finditer(r"^7-Twice: (lmrbench-task-\S+)", out, re.M)}
    assert len(tags) == 1, outs
    try:
        assert sum(f"building {next(iter(tags))} on" in out for out in outs) == 1, outs
    finally:
        _remove(docker_engine, *tags)


def test_a_parent_s_entrypoint_is_kept_and_not_run_by_the_build(base_image, docker_engine):
    """A RUN ignores the parent's ENTRYPOINT (a CUDA image's banner script, say), and so does the one-commit build;
    the image keeps it."""
    from lmrbench.benchmark.sandbox.environments.commit_build import commit_build

    holder = docker_engine.containers.create(base_image, ["true"])
    parent = "lmrbench-test-entrypoint:parent"
    try:
        holder.commit(*parent.split(":"), changes=['ENTRYPOINT ["false"]'])
    finally:
        holder.remove(force=True)
    tag = "lmrbench-test-entrypoint:task"
    try:
        commit_build(docker_engine, parent, tag, requirements=[], wheels=[], user=(1000, 1000, "repo"), labels={},
                     what="7-Entrypoint")
        config = docker_engine.images.get(tag).attrs["Config"]
        assert config["Entrypoint"] == ["false"] and config["WorkingDir"] == "/workspace"
        out = docker_engine.containers.run(tag, ["-c", "import os; print(os.getcwd(), os.getuid())"],
                                           entrypoint=["python"], remove=True, network_disabled=True)
        assert out.decode().split() == ["/workspace", "1000"]
    finally:
        _remove(docker_engine, tag, parent)
