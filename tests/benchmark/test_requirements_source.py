"""A task's requirements: requirements.txt, else environment.yml's pip section, else a warning."""

from __future__ import annotations

from helpers.small_task import write_task
from lmrbench.benchmark.sandbox.environments.requirements_source import read_task_requirements
from lmrbench.benchmark.sandbox.running.local import LocalRunner
from lmrbench.core.source.tree import build_tree
from lmrbench.core.taskset import load_task
from lmrbench.harness.request import SandboxRequest
from lmrbench.harness.sandbox import Sandbox

ENV_YML = """name: calc
channels:
  - conda-forge
dependencies:
  - python=3.11
  - scipy  # a conda package: left out, and said so
  - pip
  - pip:
      - iniconfig
"""


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def start(self, label, total):
        pass

    def advance(self, n=1, detail=""):
        pass

    def log(self, line):
        self.lines.append(line)


def test_environment_yml_pip_section_is_installed_and_conda_packages_named(tmp_path):
    task = load_task(write_task(tmp_path / "bench", dockerfile=False))
    (task.repo_dir / "environment.yml").write_text(ENV_YML)
    reqs = read_task_requirements(task)
    assert reqs.lines == ["iniconfig"] and reqs.source == task.repo_dir / "environment.yml"
    assert reqs.warnings == [f"{task.repo_dir / 'environment.yml'}: only the pip section is installed; "
                             "conda packages left out: scipy"]
    said = _Lines()
    runner = Sandbox(LocalRunner(progress=said))
    runner.prepare(task, progress=said)
    assert f"warning: {reqs.warnings[0]}" in said.lines
    tree = build_tree(task, None, "golden", tmp_path / "tree")
    probe = runner.run(SandboxRequest(task, tree, ["python", "-c", "import iniconfig; print('ok')"], 120))
    assert probe.exit_code == 0 and "ok" in probe.output


def test_a_task_without_any_requirements_file_is_warned_about(tmp_path):
    task = load_task(write_task(tmp_path / "bench", dockerfile=False))
    reqs = read_task_requirements(task)
    assert reqs.lines == [] and reqs.source is None
    assert reqs.warnings == ["1-Calc or 1-Calc/calc: no requirements.txt or environment.yml: the environment gets "
                             "pytest only"]
