"""The order in which a base image is found: present, pulled, bootstrapped, else the local runner."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(sys.executable).with_name("lmrbench")


def test_without_an_engine_validate_runs_locally_and_says_why(tmp_path):
    from helpers.small_task import write_task

    bench = tmp_path / "bench"
    write_task(bench)
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    out = subprocess.run([str(SCRIPT), "validate", str(bench), "--repeat", "1", "--max-mutants", "1"],
                         capture_output=True, text=True, timeout=600, env=env)
    lines = out.stderr.splitlines()
    said = [ln for ln in lines if "local runner" in ln]
    assert said == ["warning: no Docker engine answers: using the local runner, whose isolation is weaker than "
                    "a container's"], out.stderr
    assert "(local)" in out.stdout and "valid: 2/2" in out.stdout, out.stdout + out.stderr
