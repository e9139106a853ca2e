"""Finding a base image on a real engine: present, else why neither pulling nor bootstrapping can make one."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from benchmark.test_base_image import SCRIPT
from lmrbench.benchmark.sandbox.environments.base_image import BaseChoice, obtain_base_image


@pytest.mark.docker
def test_a_present_base_is_used_without_pulling_or_bootstrapping(base_image, docker_engine):
    choice = obtain_base_image(docker_engine, local=("lmrbench-base:never-made", base_image))
    assert choice == BaseChoice(base_image, "present")
    assert choice.line() == f"note: base image {base_image}: present locally"


@pytest.mark.docker
def test_no_registry_and_no_bootstrap_tool_says_both_reasons(docker_engine, tmp_path):
    """Docker answers, but nothing is present, the registry is unreachable and PATH holds no bootstrap tool."""
    code = (
        "import docker, json\n"
        "from lmrbench.benchmark.sandbox.environments.base_image import (NoBaseImage, obtain_base_image,\n"
        "    bootstrap_tool)\n"
        "try:\n"
        "    obtain_base_image(docker.from_env(), local=('lmrbench-base:never-made',),\n"
        "                      official='registry.invalid/python:3.11-slim',\n"
        "                      bootstrap_tag='lmrbench-base:never-made')\n"
        "except NoBaseImage as exc:\n"
        "    print(json.dumps({'tool': bootstrap_tool(), 'error': str(exc)}))\n"
    )
    empty = tmp_path / "bin"
    empty.mkdir()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PATH": str(empty)})
    assert out.returncode == 0, out.stderr
    said = json.loads(out.stdout)
    assert said["tool"] is None
    assert "registry.invalid/python:3.11-slim cannot be pulled" in said["error"]
    assert "neither mmdebstrap nor debootstrap is installed" in said["error"]
    assert "lmrbench-base:never-made" not in [t for img in docker_engine.images.list() for t in img.tags]


@pytest.mark.docker
def test_images_base_says_which_base_and_how(base_image):
    out = subprocess.run([str(SCRIPT), "image", "base"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0 and out.stdout.strip() == f"base image {base_image}: present locally", out.stderr
