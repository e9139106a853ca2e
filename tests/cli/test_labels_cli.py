"""``lmrbench labels ...`` and the report's human columns, through the installed console script."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers.labels_run import write_review_run
from helpers.official_fixture import EXPECTED, write_official
from lmrbench.benchmark.labels.store import LabelStore
from lmrbench.benchmark.pipeline.rundir import RunDir

EXE = str(Path(sys.executable).with_name("lmrbench"))


def lmrbench(*args: object, ok: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([EXE, *map(str, args)], capture_output=True, text=True, timeout=120)
    if ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def queue_bytes(run: Path) -> dict[str, bytes]:
    return {p.parent.name: p.read_bytes() for p in sorted((run / "labels").glob("*/queue.json"))}


def test_assign_label_agreement_and_report(tmp_path) -> None:
    bench, run = write_review_run(tmp_path)
    out = lmrbench("label", "assign", run, "--annotators", "alice,bob", "--overlap", "0.34", "--seed", "7")
    assert "3 items, 1 labelled twice (seed 7)" in out.stdout
    first = queue_bytes(run)
    again = json.loads(lmrbench("label", "assign", run, "--annotators", "alice,bob", "--overlap", "0.34", "--seed",
                                "7", "--format", "json").stdout)
    assert queue_bytes(run) == first  # same seed, same queues
    assert (again["items"], again["shared"], [a["name"] for a in again["annotators"]]) == (3, 1, ["alice", "bob"])
    queues = {name: RunDir(run).queue(name) for name in ("alice", "bob")}
    items = {n: {(i.task, i.impl) for i in q.items} for n, q in queues.items() if q}
    shared = items["alice"] & items["bob"]
    assert len(shared) == 1 and items["alice"] | items["bob"] == {("1-Toy", 1), ("1-Toy", 2), ("2-Async", 1)}
    # Each annotator labels their queue: 1 for the wrong dice, 3 otherwise; bob says 2 on the shared item.
    digests = {(c.task, c.impl): c.digest for c in RunDir(run).candidates()}
    for name, keys in items.items():
        store = LabelStore(RunDir(run), name)
        for key in keys:
            score = 1 if key == ("1-Toy", 1) else 3
            if name == "bob" and key in shared:
                score = 2
            store.save(*key, score, candidate_digest=digests[key])

    report_file = tmp_path / "agreement.json"
    out = lmrbench("label", "agreement", run, "--out", tmp_path / "agr", "--json", report_file)
    assert "Human vs judge" in out.stdout and "Krippendorff" in out.stdout
    data = json.loads(report_file.read_text())
    hj = data["human_vs_judge"]
    assert set(hj) >= {"n", "exact", "cohen_kappa", "weighted_kappa", "binary"}
    assert hj["n"] == 3 and 0.0 <= hj["exact"] <= 1.0 and 0.0 <= hj["binary"] <= 1.0
    assert data["inter_annotator"]["items"] == 1 and len(data["inter_annotator"]["pairs"]) == 1
    assert data["inter_annotator"]["pairs"][0]["exact"] == 0.0
    assert "median" in data["method"]
    assert (tmp_path / "agr" / "agreement.md").read_text().startswith("# Agreement")
    assert (tmp_path / "agr" / "agreement.csv").read_text().startswith("scope,slice,comparison,n,")

    out = lmrbench("report", run, "--out", tmp_path / "rep")
    assert "Human CC" in (tmp_path / "rep" / "report.md").read_text()
    row = json.loads((tmp_path / "rep" / "report.json").read_text())["rows"][0]
    assert row["labelled"] == 3


def test_import_and_export_official_through_the_cli(tmp_path) -> None:
    results = write_official(tmp_path / "results")
    out = lmrbench("label", "import-official", results, "--out", tmp_path / "runs")
    assert "'dave'" in out.stderr and "shifted to 1-3" in out.stderr
    assert "8 judge analyses, 8 labels of 4 annotators" in " ".join(out.stdout.split())
    runs = sorted((tmp_path / "runs").iterdir())
    lmrbench("label", "agreement", *runs, "--json", tmp_path / "a.json")
    hj = json.loads((tmp_path / "a.json").read_text())["human_vs_judge"]
    assert hj["n"] == EXPECTED["n"] and hj["exact"] == EXPECTED["exact"] and hj["binary"] == EXPECTED["binary"]
    lmrbench("label", "export-official", *runs, "--out", tmp_path / "back")
    assert len(list((tmp_path / "back" / "human_evaluation").glob("*.json"))) == 4

    bad = tmp_path / "bad"
    (bad / "human_evaluation").mkdir(parents=True)
    (bad / "human_evaluation" / "eve.json").write_text(json.dumps([{
        "annotator": "eve", "agent_type": "no_agent", "model_name": "m", "paper_index": 1, "function_index": 0,
        "human_judge_result": 5, "comment": ""}]))  # fmt: skip
    proc = lmrbench("label", "import-official", bad, "--out", tmp_path / "runs2", ok=False)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "eve.json" in proc.stderr and "record 0" in proc.stderr


def test_import_official_says_what_it_skipped_and_left_out_then_report_and_regression_run(tmp_path) -> None:
    from helpers.official_quirks import write_quirky_bench, write_quirky_results

    bench = write_quirky_bench(tmp_path / "bench")
    results = write_quirky_results(tmp_path / "results")
    out = lmrbench("label", "import-official", results, "--out", tmp_path / "runs", "--bench", bench)
    err = out.stderr.splitlines()
    assert sum(line.startswith("skipped task:") and "05-Broken" in line for line in err) == 1
    assert any(line.startswith("not imported:") and "logs/ (1 files)" in line for line in err)
    assert "8 judge analyses, 8 labels of 1 annotators (ann) and 8 unit-test outcomes" in " ".join(out.stdout.split())
    rep = lmrbench("report", *sorted((tmp_path / "runs").iterdir()), "--out", tmp_path / "rep", "--no-figures")
    rows = {r["run"]: r for r in json.loads((tmp_path / "rep" / "report.json").read_text())["rows"]}
    assert rows["openhands_agent-m1"]["accuracy"] == 40.0 and rows["openhands_agent-m1"]["cc"] == 1
    assert "error" not in rep.stderr
    # the imported run names its task set: the regression needs no --bench and no file written by hand
    reg = lmrbench("analyze", "regression", tmp_path / "runs" / "openhands_agent-m1", ok=False)
    # rich wraps long lines at the terminal's width, where the temporary folder's name falls: compare without spaces
    flat = "".join(reg.stderr.split())
    assert reg.returncode == 1 and "skipped:" in flat and "04-Sub/sub:therepositoryfolderholdsnofile" in flat
    assert "error:toofewdata:2successesand2failures" in flat  # 4 observations: it reached the fit
