"""The agreement report as Markdown, CSV and JSON."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from lmrbench.fsutil import atomic_write_text
from lmrbench.schemas.agreement import AgreementReport, Comparison, SliceAgreement

COMPARISONS = (("human_vs_judge", "Human vs judge"), ("human_vs_tests", "Human vs unit tests"),
               ("judge_vs_tests", "Judge vs unit tests"))  # fmt: skip
HEADERS = ["Comparison", "n", "Exact", "Cohen's kappa", "Weighted kappa (quadratic)", "Binary (3 vs not 3)"]


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def comparison_cells(title: str, c: Comparison) -> list[str]:
    """One table row of a comparison."""
    return [title, str(c.n), _f(c.exact), _f(c.cohen_kappa), _f(c.weighted_kappa), _f(c.binary)]


def _md(headers: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    return lines + ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]


def overall_rows(report: SliceAgreement) -> list[list[str]]:
    """The three comparisons of a slice as rows."""
    return [comparison_cells(title, getattr(report, key)) for key, title in COMPARISONS]


def pair_rows(report: AgreementReport) -> list[list[str]]:
    """Inter-annotator pairs as rows."""
    return [comparison_cells(f"{p.a} vs {p.b}", p) for p in report.inter_annotator.pairs]


def _slice_rows(slices: dict[str, SliceAgreement]) -> list[list[str]]:
    return [
        [name, *comparison_cells(title, getattr(s, key))[1:]]
        for name, s in slices.items()
        for key, title in COMPARISONS[:1]
    ]


def render_markdown(report: AgreementReport) -> str:
    """Everything as Markdown."""
    who = ", ".join(f"{a} ({n})" for a, n in report.annotators.items()) or "none"
    judges = ", ".join(f"{run}: {j or 'none'}" for run, j in report.judges.items())
    parts = [
        "# Agreement", "",
        f"{report.items} labelled items, {report.labels} labels; annotators: {who}; judges: {judges}.",
        *([f"{report.stale_labels} labels of changed candidates left out."] if report.stale_labels else []),
        "", f"Method: {report.method}", "",
        *_md(HEADERS, overall_rows(report)), "",
        "## Confusion (rows: first rater, columns: second rater; labels 1-3)", "",
    ]  # fmt: skip
    for key, title in COMPARISONS:
        conf = getattr(report, key).confusion
        rows = [[str(k + 1), *map(str, r)] for k, r in enumerate(conf)]
        parts += [f"**{title}**", "", *_md(["", "1", "2", "3"], rows), ""]
    ia = report.inter_annotator
    parts += ["## Between annotators", "", f"{ia.items} items with two or more labels; "
              f"Krippendorff's alpha (ordinal): {_f(ia.krippendorff_alpha)}", ""]  # fmt: skip
    if ia.pairs:
        parts += [*_md(["Pair", *HEADERS[1:]], pair_rows(report)), ""]
    parts += ["## Human vs judge by model", "", *_md(["Model", *HEADERS[1:]], _slice_rows(report.by_model)), ""]
    parts += ["## Human vs judge by category", "", *_md(["Category", *HEADERS[1:]], _slice_rows(report.by_category))]
    return "\n".join(parts) + "\n"


def render_csv(report: AgreementReport) -> str:
    """One row per (scope, slice, comparison): numbers unformatted, empty when undefined."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["scope", "slice", "comparison", "n", "exact", "cohen_kappa", "weighted_kappa", "binary"])

    def row(scope: str, name: str, comp: str, c: Comparison) -> None:
        vals = (c.exact, c.cohen_kappa, c.weighted_kappa, c.binary)
        w.writerow([scope, name, comp, c.n, *("" if v is None else round(v, 6) for v in vals)])

    for key, _ in COMPARISONS:
        row("overall", "", key, getattr(report, key))
    for p in report.inter_annotator.pairs:
        row("annotators", f"{p.a} vs {p.b}", "human_vs_human", p)
    for scope, slices in (("model", report.by_model), ("category", report.by_category)):
        for name, s in slices.items():
            for key, _ in COMPARISONS:
                row(scope, name, key, getattr(s, key))
    return buf.getvalue()


def render_json(report: AgreementReport) -> str:
    """The report as JSON (``agreement`` schema)."""
    return report.model_dump_json(indent=2) + "\n"


def write_agreement(report: AgreementReport, out: Path, json_file: Path | None = None) -> list[Path]:
    """Write agreement.md, .csv and .json into ``out`` (and the JSON also to ``json_file``)."""
    written = []
    for name, text in (("agreement.md", render_markdown(report)), ("agreement.csv", render_csv(report)),
                       ("agreement.json", render_json(report))):  # fmt: skip
        atomic_write_text(Path(out) / name, text)
        written.append(Path(out) / name)
    if json_file is not None:
        atomic_write_text(Path(json_file), render_json(report))
        written.append(Path(json_file))
    return written
