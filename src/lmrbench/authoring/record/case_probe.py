"""After a recording: make more cases where a parameter never varied, and find which mutants each case kills.

Both run in the task's own sandbox on the golden tree (``runtime/lmrbench_probe.py``): the golden code gives
the new cases' expected values, and every mutant of the golden body (``authoring.mutants.mutants``) is called on every
case, as the generated test would call it. The host reads back the new case files and a kill matrix.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lmrbench.authoring.mutants.mutants import Mutant, generate_mutants
from lmrbench.authoring.record import amplify
from lmrbench.authoring.record.amplify_plans import extra_names, probe_plans
from lmrbench.authoring.record.body_reads import body_reads
from lmrbench.authoring.record.case_files import read_case
from lmrbench.authoring.record.compare_taps import compare_taps
from lmrbench.authoring.record.recorded_call import Amplification, RecordedCall
from lmrbench.authoring.record.search_plans import SEARCH_BUDGET, SearchReport, focus, search_plan
from lmrbench.core.taskset import Task
from lmrbench.core.treeview import Tree
from lmrbench.errors import LmrError
from lmrbench.harness.request import SandboxRequest
from lmrbench.harness.sandbox import Sandbox
from lmrbench.runtime.lmrbench_values import digest as value_digest
from lmrbench.schemas.task_info import CheckerSettings, Implementation

PROBE_TIMEOUT = 600.0
"""Wall-clock limit of the whole probe run, in seconds."""
MAX_ADDED = 40
"""Most cases added per goal function (the single parameters' plans come first, then pairs, then noise)."""
CALL_TIMEOUT = 5.0
"""Limit of one mutant's call on one case, in seconds (a mutant that loops is killed)."""


@dataclass
class TargetProbe:
    """What the probe found for one goal function."""

    mutants: list[Mutant]
    pins: dict[str, str]
    """Recorded value of each scalar parameter (source text): what ``pin_parameter`` mutants pin to."""
    grad: bool
    """The recording saw a result that requires grad (``detach`` mutants are made)."""
    amplified: list[RecordedCall] = field(default_factory=list)
    """New cases, as calls like the recorded ones, with ``amplified`` set."""
    kills: dict[str, set[str]] = field(default_factory=dict)
    """Case file name -> digests of the mutants it kills."""
    notes: list[str] = field(default_factory=list)
    untried: list[str] = field(default_factory=list)
    also: list[str] = field(default_factory=list)
    """Text parameters the body compares with literals and attributes of ``self`` it reads: varied like the
    scalar parameters (``amplify.scalar_arguments``)."""
    knife: list[str] = field(default_factory=list)
    """Recorded case files whose result a one-ulp change of a float input changes: not kept."""
    unset: list[str] = field(default_factory=list)
    """Settings every recorded call left None or lacked, which the body reads where set (the plans marked
    ``unset``: ``amplify_plans.unset_settings``): unvaried unless a kept case sets one."""
    search: SearchReport = field(default_factory=SearchReport)
    """What the search for inputs that kill the mutants no case killed found."""

    def added(self) -> list[tuple[RecordedCall, Amplification]]:
        """Each added case, with how the probe made it."""
        return [(call, call.amplified) for call in self.amplified if call.amplified is not None]


def _grad(paths: list[Path]) -> bool:
    def walk(node: Any) -> bool:
        if isinstance(node, dict):
            if node.get("$") == "tensor" and node.get("requires_grad"):
                return True
            return any(walk(v) for v in node.values())
        if isinstance(node, list):
            return any(walk(v) for v in node)
        return False

    return any(walk(read_case(p)[0]["expected"]) for p in paths)


def pins_of(paths: list[Path], also: list[str] | None = None) -> dict[str, str]:
    """The recorded value of each scalar parameter (its first value), as source text (``also``: the text
    parameters to include)."""
    seen = amplify.parameter_values(paths, [n for n in also or [] if not n.startswith("self.")])
    return {name: amplify.value_text(vs[0]) for name, vs in seen.items()}


def nested_values(paths: list[Path]) -> dict[str, list[amplify.Scalar]]:
    """The recorded values of the leaves reached through attributes or keys (``self.cfg.loss.gamma``,
    ``self.config["beta"]``): what ``pin_nested`` mutants pin, kept in index.json's ``pins`` for validation."""
    return {path: values for path, values in amplify.leaf_values(paths).items() if "." in path or "[" in path}


def probe_calls(
    task: Task,
    impl: Implementation,
    sandbox: Sandbox,
    tree: Tree,
    pool: dict[str, list[RecordedCall]],
    checker: CheckerSettings,
    factory: str | None,
    out: Path,
    cancel: threading.Event | None = None,
) -> dict[str, TargetProbe]:
    """Run the probe for every target of ``pool`` (target -> recorded calls); LmrError when it fails (or its
    report does not read), ``Cancelled`` on ``cancel``."""
    from lmrbench.authoring.record.testgen import goal_import
    from lmrbench.runtime import PROBE_RUNTIME, runtime_files

    files: dict[str, bytes] = runtime_files(PROBE_RUNTIME)
    job_targets: list[dict[str, Any]] = []
    probes: dict[str, TargetProbe] = {}
    for target, calls in pool.items():
        goal, _, qual = target.partition("::")
        which = impl.goal_files.index(goal) if goal in impl.goal_files else 0
        golden = task.golden_path(impl, which).read_text(encoding="utf-8")
        paths = [call.path for call in calls]
        params = [a["name"] for a in read_case(paths[0])[0]["arguments"]]
        reads = body_reads(golden, qual, params)
        also = extra_names(paths, reads)
        pins, grad = pins_of(paths, also), _grad(paths)
        nested = nested_values(paths)
        pins |= {path: amplify.value_text(values[0]) for path, values in nested.items()}
        mutants = generate_mutants(golden, qual, file=goal, pins=pins, grad=grad, nested=nested)
        plans = probe_plans(paths, reads, params)
        taps, sites = compare_taps(golden, params, mutants)
        probes[target] = TargetProbe(mutants, pins, grad, also=also, unset=[p["param"] for p in plans
                                                                            if p.get("unset")])
        names = []
        for call in calls:
            name = f"probe/{call.file}"
            files[name] = call.path.read_bytes()
            names.append(name)
        imp = goal_import(task.repo_dir, goal)
        binding = read_case(paths[0])[0]["binding"]
        job_targets.append({
            "target": target, "file": goal, "module": imp.module, "root": imp.root, "qualname": qual,
            "binding": binding, "factory": factory, "cases": names, "amplify": plans, "max_added": MAX_ADDED,
            "mutants": [{"id": m.digest, "source": m.source, "focus": f, "site": k, "identity": m.kind == "rebind"}
                        for m, f, k in zip(mutants, focus(golden, qual, reads, [m.source for m in mutants]), sites,
                                           strict=True)],
            "search": search_plan(paths, reads, golden, qual, goal), "taps": taps,
        })
    job = {"timeout": CALL_TIMEOUT, "budget": PROBE_TIMEOUT * 0.8, "checker": checker.model_dump(),
           "targets": job_targets, "search_budget": SEARCH_BUDGET}
    files["probe/job.json"] = json.dumps(job).encode("utf-8")
    out.mkdir(parents=True, exist_ok=True)
    request = SandboxRequest(task, tree, ["python3", "-m", "lmrbench_probe"], PROBE_TIMEOUT, harness_files=files)
    result = sandbox.run(request, out, cancel)
    report = out / "probe.json"
    if result.infra_error or result.exit_code != 0 or not report.is_file():
        why = result.infra_error or (result.output.strip().splitlines() or ["no output"])[-1]
        raise LmrError(f"checking what the recorded calls catch failed: {why}"[:400])
    for entry in json.loads(report.read_text(encoding="utf-8"))["targets"]:
        probe = probes[entry["target"]]
        probe.kills = {name: set(ids) for name, ids in entry["kills"].items()}
        probe.notes = list(entry["notes"])
        probe.untried = list(entry["untried"])
        probe.knife = list(entry.get("knife", []))
        probe.search = SearchReport.from_json(entry.get("search"), report, entry["target"])
        for k, data in enumerate(entry["amplified"]):
            made = Amplification.from_json(data, report, f"{entry['target']}: added case {k + 1}")
            path = out / made.file
            case, arrays = read_case(path)
            digest = value_digest({"a": case["arguments"], "s": case["self"]}, arrays)
            probe.amplified.append(RecordedCall.added(made, path, entry["target"], digest, time.time(), k))
    return probes
