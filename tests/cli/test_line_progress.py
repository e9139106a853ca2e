"""Progress without a terminal: plain status lines, the last one when the work ends."""

from __future__ import annotations

import io

from lmrbench.cli.line_progress import LineProgress


def test_the_last_state_is_printed_when_the_work_ends() -> None:
    out = io.StringIO()
    with LineProgress(out, every=3600) as progress:
        progress.start("tasks check", 3)
        progress.advance(1, "01-DPO")
        progress.advance(2, "26-Hyena")
        progress.log("debug line")
        progress.log("warning: disk almost full")
    lines = out.getvalue().splitlines()
    assert lines[0] == "warning: disk almost full"
    assert lines[1].startswith("tasks check: 3/3 done after ") and lines[1].endswith(" s (last: 26-Hyena)")
    assert len(lines) == 2


def test_nothing_is_printed_when_nothing_was_done() -> None:
    out = io.StringIO()
    with LineProgress(out, every=3600) as progress:
        progress.start("tasks check", 0)
    assert out.getvalue() == ""
