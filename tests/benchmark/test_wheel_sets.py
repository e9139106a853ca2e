"""A wheel set names every wheel pip downloaded, and a wheel folder that lost one is made again."""

from __future__ import annotations

from lmrbench.benchmark.sandbox.environments.wheelhouse import missing_wheels, unnamed_projects

# what a second pip says when another pip saved numpy's wheel while it was fetching the same file: no "Saved"
# line for numpy (pip logs one only when the file was not there yet)
RACED = """Looking in links: /opt/wheels
Collecting numpy
  Downloading numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl (16.9 MB)
Collecting pytest
  File was already downloaded /c/wheel-files/pytest-9.2.0-py3-none-any.whl
Successfully downloaded numpy pytest
"""


def test_a_project_pip_downloaded_without_naming_its_file_is_found():
    assert unnamed_projects(RACED, ["pytest-9.2.0-py3-none-any.whl"]) == ["numpy"]
    named = ["numpy-2.4.6-cp311-cp311-manylinux_2_28_x86_64.whl", "pytest-9.2.0-py3-none-any.whl"]
    assert unnamed_projects(RACED, named) == []


def test_a_wheel_folder_without_a_requirements_wheel_is_not_reused(tmp_path):
    for name in ("pytest-9.2.0-py3-none-any.whl", "Typing_Extensions-4.12.0-py3-none-any.whl"):
        (tmp_path / name).write_bytes(b"")
    lines = ["numpy", "typing-extensions>=4", "pytest==9.2.0", "pkg @ https://example.invalid/p.whl", "-e .",
             "pywin32==306; sys_platform == 'win32'"]
    assert missing_wheels(list(tmp_path.iterdir()), lines) == ["numpy"]
