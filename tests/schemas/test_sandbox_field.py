"""Result files speak of the sandbox: new files say "sandbox"; files written before say "runner" and still load."""

from __future__ import annotations

import json

from lmrbench.schemas.testrun import TestReport
from lmrbench.schemas.validation import ImplValidation


def test_an_older_result_file_with_runner_loads_and_is_written_back_with_sandbox() -> None:
    old = {"task": "1-X", "impl": 1, "runner": "docker", "fingerprint": "f", "repeat": 1, "valid": True,
           "finished_at": "2026-01-01T00:00:00Z",
           "golden_runs": [{"status": "passed", "runner": "docker"}]}
    res = ImplValidation.model_validate_json(json.dumps(old))
    assert res.sandbox == "docker" and res.golden_runs[0].sandbox == "docker"
    written = json.loads(res.model_dump_json())
    assert written["sandbox"] == "docker" and "runner" not in written
    assert "runner" not in written["golden_runs"][0]
    assert TestReport(status="passed", sandbox="local").sandbox == "local"
