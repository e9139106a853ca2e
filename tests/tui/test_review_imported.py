"""An imported official run (``labels import-official``) holds no candidate code: review shows what it holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.official_fixture import write_official
from helpers.pilot import screen_text
from helpers.review_app import facts, opened
from lmrbench.benchmark.labels.official import import_official
from lmrbench.tui.app import make_app
from lmrbench.tui.dialogs.text_view import TextDialog

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
async def test_an_imported_run_shows_its_labels_verdicts_and_agreement(tmp_path: Path, size: tuple[int, int]) -> None:
    import_official(write_official(tmp_path / "results"), tmp_path / "runs")
    run = tmp_path / "runs" / "no_agent-gpt4o"
    bench = tmp_path / "bench"
    app = make_app(bench, review=run, annotator="erin")
    async with app.run_test(size=size) as pilot:
        screen = await opened(app, pilot)
        assert screen.session is not None and screen.session.read_only and screen.session.items
        seen = []
        for _ in screen.session.items:  # n walks the items
            seen.append(facts(screen))
            await pilot.press("n")
            await pilot.pause()
        assert "item 6 of 6" in screen_text(app)
        shown = "\n".join(seen)
        for who in ("alice: 3 completely correct", "bob: 3", "carol: 2", "dave: 3"):
            assert who in shown, who  # every annotator's label (dave's 0-2 scale read as 1-3)
        assert "Judge: 2 logically correct" in shown and "judge says 2" in shown  # verdicts with their reasons
        assert shown.count("Unit tests: ") == 6
        footer = screen_text(app).splitlines()[-2:]
        for dead in ("1 Wrong", "s Skip", "x Clear", "c Note", "u Unsure", "z Undo", "a Filter"):
            assert dead not in "\n".join(footer), dead  # no key that does nothing
        assert "m Agree" in "\n".join(footer)
        await pilot.press("m")
        for _ in range(50):
            await pilot.pause(0.05)
            if isinstance(app.screen, TextDialog):
                break
        assert isinstance(app.screen, TextDialog)
        assert "kappa" in screen_text(app).lower() or "alpha" in screen_text(app).lower()


async def test_the_agreement_of_a_blind_review_names_no_run(tmp_path: Path) -> None:
    from helpers.labels_run import write_review_run

    bench, run = write_review_run(tmp_path)
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(app, pilot)
        assert screen.session is not None
        for _ in screen.session.items:
            await pilot.press("3", "n")
            await pilot.pause()
        assert screen.session.progress()[0] == len(screen.session.items)
        await pilot.press("m")
        for _ in range(50):
            await pilot.pause(0.05)
            if isinstance(app.screen, TextDialog):
                break
        assert isinstance(app.screen, TextDialog)
        await pilot.pause()
        shown = app.screen.title_text + "\n" + app.screen.text
        assert "this run" in shown
        assert "toy-model" not in shown
