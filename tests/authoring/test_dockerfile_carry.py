"""`images dockerfile --force` carries every install step of a task's own Dockerfile into the one it writes
(requirements, editable folders of the repository, apt packages, ENV), or refuses naming the step, writing
nothing; an editable folder is imported from the repository of the run, whichever variant it holds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers.tasks import Impl, write_task
from lmrbench.authoring.check.dockerfile import edited, is_generated, write_dockerfile
from lmrbench.authoring.check.dockerfile_carry import PTH_TEXT
from lmrbench.cli.main import app
from lmrbench.errors import LmrError

ORIGINAL = """ARG UID
ARG GID
ARG DIR=repo

FROM pytorch/pytorch:2.0.1-cuda11.7-cudnn8-runtime
ARG UID
ARG GID
ARG DIR
RUN apt-get update && apt-get install -y --no-install-recommends \\
      build-essential \\
    && rm -rf /var/lib/apt/lists/*
RUN groupadd -g ${GID} usergroup \\
    && useradd -m -u ${UID} -g usergroup user
ENV HF_HOME=/tmp/cache
WORKDIR /workspace
COPY . .
# Install Python dependencies
RUN pip install --upgrade pip setuptools wheel \\
    && cd ${DIR} \\
    && pip install -e adapters/ \\
    && pip install --no-cache-dir -r requirements.txt && pip install peft==0.10.0
RUN mkdir -p /workspace/${DIR}/unit_test/logs \\
    && chown -R user:usergroup /workspace/${DIR}/unit_test/logs
USER user
"""

SETUP = ('import setuptools\n\nsetuptools.setup(name="adapters", packages=setuptools.find_packages(), '
         'install_requires=["numpy>=1.20"])\n')


def _task(root: Path, dockerfile: str) -> Path:
    goal = "def scale(x, k):\n    return [v * k for v in x]\n"
    test = "from adapters.ops import scale\n\n\ndef test_scale():\n    assert scale([1], 2) == [2]\n"
    task = write_task(root, "4-Adapt", repo="repo", goal_file="adapters/adapters/ops.py", goal=goal, golden=goal,
                      impls=[Impl("scale", "unit_test/test_ops.py")],
                      files={"unit_test/test_ops.py": test, "adapters/setup.py": SETUP,
                             "adapters/adapters/__init__.py": "", "requirements.txt": "scipy\n"},
                      dockerfile=False)
    (task / "Dockerfile").write_text(dockerfile)
    return task


def test_force_carries_every_install_step_and_says_each(tmp_path):
    task = _task(tmp_path, ORIGINAL)
    res = CliRunner().invoke(app, ["image", "dockerfile", str(task), "--force"])
    assert res.exit_code == 0, res.output
    text = (task / "Dockerfile").read_text()
    assert is_generated(text) and edited(text)  # built as written, carried steps included
    assert "apt-get install -y --no-install-recommends build-essential" in text
    assert "ENV HF_HOME=/tmp/cache" in text and "ENV LMRBENCH_EDITABLE=adapters" in text
    assert "lmrbench_editable.pth" in text and "usergroup" not in text and "unit_test/logs" not in text
    carried = [ln for ln in (task / "requirements.txt").read_text().splitlines() if not ln.startswith("#")]
    assert carried == ["numpy>=1.20", "scipy", "peft==0.10.0"]
    # the carried steps sit where the task's user is not yet set up: they run as root
    assert text.index("apt-get") < text.index("USER $UID:$GID")
    out = " ".join(res.output.split())
    assert "carried `pip install -e adapters/`: repo/adapters is on the import path of every run, its " \
           "requirements numpy>=1.20 added" in out
    assert "carried `pip install peft==0.10.0` into the requirements" in out and "carried ENV HF_HOME" in out
    assert "note: the FROM image held torch 2.0.1, which no requirement names: add torch==2.0.1" in out
    assert f"add torch==2.0.1 to {task / 'requirements.txt'} (written now)" in out


def test_the_torch_note_names_the_requirements_file_the_build_reads_and_following_it_gets_numpy_1(tmp_path):
    """The original installs only an editable folder with no requirements of its own, and the task has no
    requirements file: the note names the file to make at the task's root, which is the one the build reads; the
    torch it advises (2.0.1, built against NumPy 1) then gets numpy<2 beside it, not numpy 2, which it cannot use."""
    from lmrbench.benchmark.sandbox.environments.layers import named_companions
    from lmrbench.benchmark.sandbox.environments.requirements_source import read_task_requirements
    from lmrbench.core.taskset import load_task

    task = _task(tmp_path, ORIGINAL.replace(" \\\n    && pip install --no-cache-dir -r requirements.txt && "
                                            "pip install peft==0.10.0", ""))
    (task / "repo" / "requirements.txt").unlink()
    (task / "repo" / "adapters" / "setup.py").write_text(SETUP.replace(', install_requires=["numpy>=1.20"]', ""))
    _, said = write_dockerfile(task, "repo", force=True)
    assert not (task / "requirements.txt").exists()
    note = next(s for s in said if "held torch" in s)
    assert f"add torch==2.0.1 to {task / 'requirements.txt'} (a new file)" in note, note
    (task / "requirements.txt").write_text("torch==2.0.1\n")  # as the note says
    reqs = read_task_requirements(load_task(task))
    assert reqs.source == task / "requirements.txt" and reqs.lines == ["torch==2.0.1"]
    assert named_companions(reqs.lines) == ["numpy<2"]


@pytest.mark.parametrize(("step", "named"), [
    ("pip install -r ${DIR}/requirements.txt --no-deps", "pip option --no-deps"),
    ("bash ${DIR}/scripts/install.sh", "the step `bash ${DIR}/scripts/install.sh`: it reads the task's files"),
    ("cd ${DIR} && pip install .", "is a local path"),
    ("pip install -e ${DIR}/missing/", "is not a folder of the repository"),
])
def test_a_step_that_cannot_be_carried_is_named_and_nothing_is_written(tmp_path, step, named):
    original = ORIGINAL.replace("USER user\n", f"RUN {step}\nUSER user\n")
    task = _task(tmp_path, original)
    with pytest.raises(LmrError) as exc:
        write_dockerfile(task, "repo", force=True)
    text = str(exc.value)
    assert named in text and "nothing was written" in text, text
    assert (task / "Dockerfile").read_text() == original and not (task / "requirements.txt").exists()
    res = CliRunner().invoke(app, ["image", "dockerfile", str(task), "--force"])
    assert res.exit_code != 0 and "cannot carry the step" in str(res.exception)


def test_an_editable_folder_is_imported_from_the_repository_the_run_holds(tmp_path):
    """The image's .pth line, read by Python's own site machinery: the package is found from the working
    directory (the variant under test), after every other path entry, even when a test drops sys.path[0:2]."""
    site_dir = tmp_path / "site"
    site_dir.mkdir()
    (site_dir / "lmrbench_editable.pth").write_text(PTH_TEXT)
    for variant, answer in (("golden", 2), ("candidate", 3)):
        pkg = tmp_path / variant / "adapters" / "adapters"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text(f"ANSWER = {answer}\n")
    code = ("import site, sys; site.addsitedir(sys.argv[1]); del sys.path[0:2]; "
            "import adapters; print(adapters.ANSWER, adapters.__file__)")
    env = {"LMRBENCH_EDITABLE": "adapters", "PATH": "/usr/bin:/bin"}
    for variant, answer in (("golden", 2), ("candidate", 3)):
        out = subprocess.run([sys.executable, "-c", code, str(site_dir)], cwd=tmp_path / variant, env=env,
                             capture_output=True, text=True, check=True).stdout.split()
        assert out == [str(answer), str(tmp_path / variant / "adapters" / "adapters" / "__init__.py")]
