"""Repeated samples of one run: ``generate --samples k`` writes ``RUN/samples/<s>/`` for s = 1..k, each a run
folder of its own (its own run.json, candidates, results and verdicts), so that evaluate, judge and regrade treat
each sample as they treat any run, and the report reads them back as one run with k samples (pass@1, pass@k).

``agent --samples k`` does the same with an agent's runs.
Sample 1 asks the model exactly as a run without samples does (the same cache entries); sample s > 1 salts the
cache key with its number, so a cached reply is never reused as another sample.
"""

from __future__ import annotations

from pathlib import Path

from lmrbench.errors import LmrError, UsageError

SAMPLES_DIR = "samples"


def sample_folders(out: Path, samples: int) -> list[Path]:
    """The run folders ``--samples`` writes into: ``out`` itself for one sample, ``out/samples/<s>`` for more;
    LmrError for fewer than one, or for more where ``out`` already holds a run of one sample."""
    if samples < 1:
        raise UsageError(f"--samples {samples}: give 1 or more")
    if samples > 1 and (Path(out) / "run.json").is_file():
        raise LmrError("holds a run of one sample; give --samples another --out", Path(out) / "run.json")
    return [Path(out)] if samples == 1 else [sample_path(out, s) for s in range(1, samples + 1)]


def sample_path(run: Path, sample: int) -> Path:
    """The folder of one sample of the run at ``run``."""
    return Path(run) / SAMPLES_DIR / str(sample)


def sample_runs(run: Path) -> list[Path]:
    """The sample folders of ``run`` in order (each holding a run.json), or [] when it is no run of samples."""
    folder = Path(run) / SAMPLES_DIR
    if (Path(run) / "run.json").is_file() or not folder.is_dir():
        return []
    found = [p for p in folder.iterdir() if p.name.isdigit() and (p / "run.json").is_file()]
    return sorted(found, key=lambda p: int(p.name))


def expand_runs(runs: list[Path]) -> list[tuple[Path, int, Path]]:
    """Each run folder as (the run as named, sample number, the run folder to read): a run of samples gives one
    entry per sample, any other run one entry of sample 1."""
    out: list[tuple[Path, int, Path]] = []
    for run in runs:
        samples = sample_runs(run)
        out += [(Path(run), int(p.name), p) for p in samples] or [(Path(run), 1, Path(run))]
    return out


def run_folders(runs: list[Path]) -> list[Path]:
    """The run folders to read or work on for ``runs``: each sample of a run of samples, any other run as it is."""
    return [folder for _, _, folder in expand_runs(runs)]
