"""Progress without a terminal (CI logs, pipes): plain status lines, the last one when the work ends; a bar on a
terminal."""

from __future__ import annotations

import contextlib
import io

from rich.console import Console

from lmrbench.cli.rich_progress import RichProgress


def _off_terminal() -> tuple[io.StringIO, Console]:
    out = io.StringIO()
    return out, Console(file=out, force_terminal=False, width=200)


def test_the_last_state_of_each_phase_is_printed_off_a_terminal() -> None:
    out, console = _off_terminal()
    with RichProgress(console, every=3600, quiet_under=0) as progress:
        progress.start("build images", 1)
        progress.advance(1, "1-DPO")
        progress.start("tasks check", 3)
        progress.advance(1, "01-DPO")
        progress.advance(2, "26-Hyena")
        progress.log("debug line")
        progress.log("warning: disk almost full")
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("build images: 1/1 done after ") and lines[0].endswith(" s (last: 1-DPO)")
    assert lines[1] == "warning: disk almost full"
    assert lines[2].startswith("tasks check: 3/3 done after ") and lines[2].endswith(" s (last: 26-Hyena)")
    assert len(lines) == 3


def test_nothing_is_printed_when_nothing_was_done_or_the_work_ends_in_an_error() -> None:
    out, console = _off_terminal()
    with RichProgress(console, every=3600, quiet_under=0) as progress:
        progress.start("tasks check", 0)
    with contextlib.suppress(ValueError), RichProgress(console, every=3600, quiet_under=0) as progress:
        progress.start("clone", 1)
        progress.advance(1, "3416e15")
        raise ValueError("no function 'preferenceloss'")
    assert out.getvalue() == ""


def test_a_quick_phase_is_summed_up_only_at_the_end() -> None:
    out, console = _off_terminal()
    with RichProgress(console, every=3600, quiet_under=3600) as progress:
        progress.start("clone", 1)
        progress.advance(1, "3416e15")
        progress.start("tasks check", 2)
        progress.advance(2, "2-B")
    [line] = out.getvalue().splitlines()
    assert line.startswith("tasks check: 2/2 done after ")


def test_a_terminal_gets_a_bar_and_no_status_lines() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100)
    with RichProgress(console, every=3600) as progress:
        progress.start("validate", 2)
        progress.advance(2, "1-DPO")
    text = out.getvalue()
    assert "2/2" in text and "done after" not in text
