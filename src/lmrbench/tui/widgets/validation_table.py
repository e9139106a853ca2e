"""The validation of a task's implementations: golden passes, masked fails, mutants killed, flaky tests."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, RichLog

from lmrbench.benchmark.validation.weakness import kinds_text, survivors
from lmrbench.schemas.validation import ImplValidation


class ValidationTable(Vertical):
    """One row per implementation, and below: the reasons of the invalid ones, the surviving mutants with diffs."""

    DEFAULT_CSS = """
    ValidationTable { height: 1fr; }
    ValidationTable DataTable { height: auto; max-height: 12; }
    ValidationTable RichLog { height: 1fr; }
    """

    def compose(self) -> ComposeResult:
        yield DataTable(id="vt-table", cursor_type="row")
        yield RichLog(id="vt-reasons", markup=False, wrap=True)

    def on_mount(self) -> None:
        """Columns."""
        columns = ("impl", "valid", "golden", "masked fails", "mutants killed", "flaky", "evidence", "sandbox",
                   "seconds")
        self.query_one(DataTable).add_columns(*columns)

    def show(self, results: list[ImplValidation]) -> None:
        """Show the results of one validation."""
        table = self.query_one(DataTable)
        log = self.query_one(RichLog)
        table.clear()
        log.clear()
        for r in results:
            rate = r.kill_rate
            table.add_row(
                str(r.impl),
                {"yes": "valid", "weak": "weak", "no": "INVALID", "not run": "NOT RUN"}[r.verdict],
                f"{r.golden_passes}/{r.repeat}",
                "yes" if r.masked_failed else "no",
                f"{r.mutants_killed}/{r.mutants_total}" + (f" ({rate:.0%})" if rate is not None else ""),
                str(len(r.flaky_tests)),
                r.evidence_text or "-",
                r.sandbox,
                f"{r.seconds:.1f}",
            )
            for reason in r.reasons:
                log.write(f"impl {r.impl}: {reason}")
            if r.not_run is not None:
                log.write(f"impl {r.impl}: not run: {r.not_run.detail}; fix: {r.not_run.fix}")
            if r.kind_kills:
                log.write(f"impl {r.impl}: mutants killed by kind: {kinds_text(r.kind_kills)}")
            for reason in r.weak_reasons if r.valid else []:
                log.write(f"impl {r.impl}: valid but weak: {reason}")
            for test in r.flaky_tests:
                log.write(f"impl {r.impl}: flaky {test}")
            for m in survivors(r.mutants):
                log.write(f"impl {r.impl}: surviving mutant {m.name or m.kind}: {m.description}")
                if m.diff:
                    log.write(m.diff)
        if results and all(r.valid and not r.weak for r in results):
            log.write("every implementation is valid")
