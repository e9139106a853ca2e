"""The README's first command on a machine with Python only: no Docker socket, no mmdebstrap, no registry.

The container is made from the local base image (Debian and Python, nothing of lmrbench), gets the project's
tracked files, and runs the quick start's first command exactly as the README writes it.
"""

from __future__ import annotations

import re

import pytest
from first_run import readme_command, run_fresh_machine, table_counts

from lmrbench.benchmark.sandbox.environments.images import BASE_IMAGE_TAG


@pytest.mark.long
@pytest.mark.docker
@pytest.mark.timeout(1800)
def test_readme_first_command_on_a_machine_with_python_only(docker_engine, base_image):
    command = readme_command(1)
    assert command.startswith("python3 -m venv .venv && .venv/bin/pip install -c constraints.txt uv && "
                              ".venv/bin/uv pip install --python .venv -c constraints.txt -e .")
    assert base_image == BASE_IMAGE_TAG
    probe = "for t in docker mmdebstrap debootstrap; do command -v $t >/dev/null && echo HAS-$t; done; "
    probe += "test -S /var/run/docker.sock && echo HAS-socket; "
    code, out = run_fresh_machine(base_image, probe + command)
    assert "HAS-" not in out, out[:2000]
    assert code == 0, out[-3000:]
    assert ("warning: no Docker engine answers: using the local runner, whose isolation is weaker than a "
            "container's") in out
    assert table_counts(out) == (3, 3)
    # off a terminal the progress bar is a status line: a CI log says how far validate got
    assert re.search(r"^validate: \d+/\d+ done after \d+ s", out, re.M), out[-3000:]
