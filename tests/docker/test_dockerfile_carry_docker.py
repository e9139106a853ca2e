"""A task whose own Dockerfile installs a folder of its repository with `pip install -e` (25-AdaLora's
`pip install -e loralib/`): `images dockerfile --force` carries the step, the image is built, and the golden code
passes split grading while the masked stub fails, though the test drops sys.path[0:2] to import the package from
the environment as the official test does, in a pytest test and in an official script-style one (25-AdaLora's
kind: its run once lost the image's variable naming the folder, and the import failed)."""

from __future__ import annotations

import pytest

from helpers.tasks import Impl, write_task
from lmrbench.authoring.check.dockerfile import write_dockerfile
from lmrbench.benchmark.validation.plan import ValidateOptions
from lmrbench.benchmark.validation.taskset import validate_taskset
from lmrbench.harness.sandbox import Sandbox

pytestmark = [pytest.mark.docker, pytest.mark.long]

ORIGINAL = """ARG DIR=repo
FROM pytorch/pytorch:2.0.1-cuda11.7-cudnn8-runtime
ARG UID
ARG GID
ARG DIR
WORKDIR /workspace
COPY . .
RUN pip install --upgrade pip setuptools wheel \\
    && cd ${DIR} \\
    && pip install -e adapters/
USER user
"""
GOLDEN = "def scale(x, k):\n    return [v * k for v in x]\n"
MASKED = "def scale(x, k):\n    raise NotImplementedError\n"
TEST = '''import sys

removed = [sys.path.pop(0) for _ in range(2)]
from adapters.ops import scale  # noqa: E402  (from the environment, as the official test imports it)

sys.path[:0] = removed


def test_scale():
    assert scale([1, 2], 3) == [3, 6]
'''

LEGACY = '''import logging
import sys
import unittest
from pathlib import Path

removed = [sys.path.pop(0) for _ in range(2)]
from adapters.ops import scale  # noqa: E402

sys.path[:0] = removed
log_dir = Path(__file__).resolve().parent / "logs"
log_dir.mkdir(parents=True, exist_ok=True)
logging.basicConfig(filename=log_dir / "unit_test_2.log", filemode="w", level=logging.INFO)


class TestScale(unittest.TestCase):
    def test_scale(self):
        try:
            self.assertEqual(scale([1, 2], 3), [3, 6])
            logging.info("Test Passed")
        except AssertionError:
            logging.info("Test Failed")
            raise


if __name__ == "__main__":
    unittest.main()
'''
"""The same test as the official script-style tests are written (25-AdaLora's)."""


def test_an_editable_folder_carried_from_the_original_dockerfile_grades_split(tmp_path, base_image):
    from lmrbench.benchmark.sandbox.running.docker import DockerRunner

    bench = tmp_path / "bench"
    task = write_task(bench, "5-Editable", repo="repo", goal_file="adapters/adapters/ops.py", goal=MASKED,
                      golden=GOLDEN,
                      impls=[Impl("scale", "unit_test/unit_test_1.py"), Impl("scale", "unit_test/unit_test_2.py")],
                      files={"unit_test/unit_test_1.py": TEST, "unit_test/unit_test_2.py": LEGACY,
                             "adapters/adapters/__init__.py": "",
                             "adapters/setup.py": "import setuptools\n\nsetuptools.setup(name='adapters', "
                                                  "packages=setuptools.find_packages())\n"},
                      dockerfile=False)
    (task / "Dockerfile").write_text(ORIGINAL)
    _, said = write_dockerfile(task, "repo", force=True)
    assert any("pip install -e adapters/" in s for s in said) and any("held torch 2.0.1" in s for s in said)
    summary = validate_taskset(bench, sandbox=Sandbox(DockerRunner(base_image=base_image)),
                               options=ValidateOptions(repeat=1, max_mutants=0, timeout=120))
    pytest_row, legacy_row = summary.rows
    for row in (pytest_row, legacy_row):
        assert row.not_run is None and row.golden_passes == 1 and row.masked_failed, row
    assert legacy_row.evidence.startswith("legacy")
