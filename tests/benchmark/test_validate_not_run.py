"""What stops a golden run before the golden code runs is "not run", with its cause and fix, and is left out of
the golden pass rate; the exit status tells "invalid" (1) from "could not run" (3)."""

from __future__ import annotations

import json
import shutil

from typer.testing import CliRunner

from helpers.small_task import TEST_ADD, TEST_SCALE, write_task
from lmrbench.benchmark.validation.plan import ValidateOptions
from lmrbench.benchmark.validation.store import latest_results
from lmrbench.benchmark.validation.taskset import validate_taskset
from lmrbench.cli.main import app
from lmrbench.schemas.validation import ValidationSummary

POINTER = "version https://git-lfs.github.com/spec/v1\noid sha256:" + "a" * 64 + "\nsize 912\n"
ARGS = ["--sandbox", "local", "--repeat", "1", "--max-mutants", "0"]
UNCARRIED_ARG = '''import threading

from calc import scale


def test_scale_of_a_lock():
    assert scale([threading.Lock()], 1) is not None
'''
"""A test whose argument (a lock) the value codec cannot carry to the candidate's process."""


def test_a_set_whose_checkout_is_incomplete_counts_what_ran_and_names_what_did_not(tmp_path):
    bench = tmp_path / "bench"
    sound = write_task(bench, "1-Calc")
    (sound / "calc" / "assets" / "weights.bin").parent.mkdir()
    (sound / "calc" / "assets" / "weights.bin").write_text(POINTER)  # read by no test: it does not stop a run
    shutil.rmtree(write_task(bench, "2-Empty") / "calc")
    (bench / "2-Empty" / "calc").mkdir()  # a submodule a clone left empty
    shutil.rmtree(write_task(bench, "3-Missing") / "calc")  # ... or missing
    (bench / ".gitmodules").write_text('[submodule "2-Empty/calc"]\n\tpath = 2-Empty/calc\n'
                                       "\turl = https://example.org/calc.git\n")
    lfs = write_task(bench, "4-Lfs", tests={"unit_test/unit_test_1.py": TEST_ADD.replace(
        "from calc import add", "from calc import add\n\nDATA = 'unit_test/expected.npy'"),
        "unit_test/unit_test_2.py": TEST_SCALE})
    (lfs / "calc" / "unit_test" / "expected.npy").write_text(POINTER)
    write_task(bench, "5-Codec", tests={"unit_test/unit_test_1.py": TEST_ADD,
                                       "unit_test/unit_test_2.py": UNCARRIED_ARG})

    res = CliRunner().invoke(app, ["validate", str(bench), *ARGS])
    assert res.exit_code == 3, res.output  # nothing invalid; some could not run
    summary = ValidationSummary.model_validate(json.loads((bench / ".lmrbench/validate/summary.json").read_text()))
    causes = {(r.task, r.impl): (r.verdict, r.not_run.cause if r.not_run else "") for r in summary.rows}
    assert causes == {
        ("1-Calc", 1): ("yes", ""), ("1-Calc", 2): ("yes", ""),
        ("2-Empty", 1): ("not run", "empty_repo"), ("2-Empty", 2): ("not run", "empty_repo"),
        ("3-Missing", 1): ("not run", "empty_repo"), ("3-Missing", 2): ("not run", "empty_repo"),
        ("4-Lfs", 1): ("not run", "lfs"), ("4-Lfs", 2): ("yes", ""),
        ("5-Codec", 1): ("yes", ""), ("5-Codec", 2): ("not run", "codec"),
    }
    line = next(x for x in res.output.splitlines() if x.startswith("golden pass rate:"))
    assert line == ("golden pass rate: 4/4 that ran (100.0%); 6 not run: 4 empty submodules, "
                    "1 LFS pointers the tests read, 1 values the codec cannot carry; valid: 4/10, "
                    "valid but weak: 0/10, invalid: 0/10")
    assert summary.golden_pass_rate == 1.0 and summary.golden_ran == 4 and summary.problems == []
    out = " ".join(res.output.split())
    assert "not run 2-Empty#1: 2-Empty/calc is empty: a git submodule never checked out " \
           "(https://example.org/calc.git); fix: run `git submodule update --init 2-Empty/calc`" in out
    assert "not run 3-Missing#1: 3-Missing/calc is missing" in out
    assert "calc/unit_test/expected.npy" in out and "git lfs pull" in out
    codec = next(r for r in summary.rows if r.task == "5-Codec" and r.impl == 2).not_run
    assert codec is not None and "lock" in codec.detail and '"isolation": "shared" in implementations[2]' in codec.fix

    # one invalid implementation makes the status 1, whatever could not run
    (bench / "1-Calc" / "calc" / "unit_test" / "unit_test_1.py").write_text(TEST_ADD.replace("== 5", "== 6"))
    again = CliRunner().invoke(app, ["validate", str(bench), *ARGS])
    assert again.exit_code == 1, again.output
    assert "golden pass rate: 3/4 that ran (75.0%); 6 not run:" in again.output


def test_a_set_where_nothing_ran_has_no_rate(tmp_path):
    bench = tmp_path / "bench"
    write_task(bench, tests={"unit_test/unit_test_2.py": TEST_SCALE})
    shutil.rmtree(bench / "1-Calc" / "calc" / "unit_test")
    summary = validate_taskset(bench, sandbox="local", options=ValidateOptions(repeat=1, max_mutants=0))
    assert summary.golden_pass_rate is None and summary.golden_ran == 0
    assert [r.not_run.cause for r in summary.rows if r.not_run] == ["no_tests", "no_tests"]


READS_UNCOMMITTED = '''

def test_recorded():
    with open("outputs/expected.txt") as f:
        assert add(2, 3) == int(f.read())
'''
"""A test reading a file the repository's .gitignore kept out of every copy."""


def test_a_requirement_that_cannot_be_resolved_is_not_run_and_named(tmp_path, monkeypatch):
    monkeypatch.setenv("LMRBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # an index with nothing on it: pip's own answer, offline
    monkeypatch.setenv("PIP_FIND_LINKS", str((tmp_path / "empty").resolve()))
    (tmp_path / "empty").mkdir()
    bench = tmp_path / "bench"
    task = write_task(bench)
    (task / "calc" / "requirements.txt").write_text("lmrbench-absent-project==1.0\n")
    (task / "calc" / "unit_test" / "unit_test_1.py").write_text(TEST_ADD + READS_UNCOMMITTED)
    (task / "calc" / ".gitignore").write_text("outputs/\n")
    (task / "calc" / "copied.py").write_text(  # scale's golden body, left in another file: a leak
        "def times(xs, k):\n    out = []\n    for x in xs:\n        out.append(x * k)\n    return out\n")
    res = CliRunner().invoke(app, ["--verbose", "validate", str(bench), *ARGS])
    assert res.exit_code == 3, res.output
    assert "pip: ERROR: Could not find a version that satisfies the requirement" in res.output  # -v: all of it
    summary = ValidationSummary.model_validate(json.loads((bench / ".lmrbench/validate/summary.json").read_text()))
    assert [r.not_run.cause for r in summary.rows if r.not_run] == ["requirement", "requirement"]
    first, second = (r.not_run for r in summary.rows)
    assert first is not None and second is not None
    assert "No matching distribution found for lmrbench-absent-project==1.0" in first.detail, first.detail
    # whatever the environment, data the tests read that exists nowhere stops the golden too: said before a build
    assert first.detail.endswith("; and the tests read outputs/expected.txt, which exist nowhere in the task "
                                 "(the repository's .gitignore ignores 'outputs/': never committed)"), first.detail
    assert "(`task check` F118)" in first.fix and "outputs/" not in second.detail
    # ... and so does a leak, which no environment fixes (26-Hyena's hyena.py, before its image can be had)
    assert second.detail.endswith("; and, whatever runs, invalid: the golden body is still in the repository "
                                  "(copied.py)"), second.detail
    assert "golden body" not in first.detail
    assert "2 requirements that cannot be resolved" in res.output


def test_a_pointer_the_tests_read_by_a_name_they_build_is_found_in_the_golden_run(tmp_path):
    """No test spells the file's name, so the run starts; pickle reading the pointer says so, and the
    implementation is not run (an LFS pointer), not a failing golden."""
    reads = TEST_ADD + (
        "\n\ndef test_recorded():\n    import pickle, pathlib\n"
        "    name = ''.join(['ca', 'ses']) + '.pk' + 'l'\n"
        "    pickle.loads((pathlib.Path(__file__).parent / name).read_bytes())\n")
    bench = tmp_path / "bench"
    task = write_task(bench, tests={"unit_test/unit_test_1.py": reads, "unit_test/unit_test_2.py": TEST_SCALE})
    (task / "calc" / "unit_test" / "cases.pkl").write_text(POINTER)
    summary = validate_taskset(bench, sandbox="local", options=ValidateOptions(repeat=1, max_mutants=0))
    first = summary.rows[0]
    assert first.verdict == "not run" and first.not_run is not None and first.not_run.cause == "lfs", first
    assert "calc/unit_test/cases.pkl" in first.not_run.detail and summary.golden_ran == 1
    stored = latest_results(bench)[("1-Calc", 1)]
    assert len(stored.golden_runs) == 1 and stored.masked is None  # it ran, and stopped at the pointer


MISSING_MODULE = TEST_ADD.replace("from calc import add", "import calc_plugins  # noqa: F401\nfrom calc import add")
DOWNLOADS = TEST_ADD + '''

def test_add_with_the_hub_s_weights():
    import urllib.request

    urllib.request.urlopen("http://127.0.0.1:9/weights.bin", timeout=5)  # a model fetched by the test: no network
    assert add(1, 1) == 2
'''
MISSING_DATA = TEST_SCALE + '''

def test_scale_recorded():
    import json

    with open("tensors/expected_scale.json") as f:
        assert scale([1, 2], 3) == json.load(f)
'''


def test_each_golden_failure_names_its_cause_from_the_run_and_a_wrong_golden_stays_invalid(tmp_path):
    """An import that fails and a data file the repository's .gitignore kept out stop the golden run: "not run",
    named from the run's output; a golden that runs and answers wrong is invalid, as before."""
    bench = tmp_path / "bench"
    task = write_task(bench, tests={"unit_test/unit_test_1.py": MISSING_MODULE,
                                    "unit_test/unit_test_2.py": MISSING_DATA})
    (task / "calc" / ".gitignore").write_text("*.pyc\ntensors/\n")
    wrong = write_task(bench, "2-Wrong", tests={"unit_test/unit_test_1.py": TEST_ADD.replace("== 5", "== 6"),
                                                "unit_test/unit_test_2.py": TEST_SCALE})
    assert wrong.is_dir()
    write_task(bench, "3-Hub", tests={"unit_test/unit_test_1.py": DOWNLOADS, "unit_test/unit_test_2.py": TEST_SCALE})
    res = CliRunner().invoke(app, ["validate", str(bench), *ARGS])
    assert res.exit_code == 1, res.output  # 2-Wrong is invalid
    summary = ValidationSummary.model_validate(json.loads((bench / ".lmrbench/validate/summary.json").read_text()))
    rows = {(r.task, r.impl): r for r in summary.rows}
    imp, data = rows[("1-Calc", 1)].not_run, rows[("1-Calc", 2)].not_run
    assert imp is not None and imp.cause == "import" and "cannot import module 'calc_plugins'" in imp.detail
    assert "requirements" in imp.fix
    assert data is not None and data.cause == "data"
    assert data.detail == ("the tests read tensors/expected_scale.json, which is missing: it exists nowhere in the "
                           "task; the repository's .gitignore ignores it ('tensors/'), so it was never committed")
    hub = rows[("3-Hub", 1)].not_run
    assert hub is not None and hub.cause == "download" and "urlopen error" in hub.detail, hub
    bad = rows[("2-Wrong", 1)]
    assert bad.not_run is None and bad.verdict == "no"
    out = " ".join(res.output.split())
    assert "1 imports that fail, 1 data files missing, 1 downloads the tests need" in out
    assert "not run 1-Calc#2: the tests read tensors/expected_scale.json" in out
