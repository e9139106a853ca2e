"""The app at 80x24, the smallest size it is laid out for: each step keeps room for what it is for, the focused
field is unmistakable, and any panel can be shown whole."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.color import Color
from textual.widgets import Input, TextArea

from helpers.labels_run import write_review_run
from helpers.pilot import open_and_clone, screen_text, wait_for_workers
from helpers.review_app import opened, set_instructions
from lmrbench.tui.app import make_app
from lmrbench.tui.dialogs.text_view import TextDialog
from lmrbench.tui.widgets.code_diff import CodeDiff, WholeDiffView
from lmrbench.tui.widgets.paper_view import PaperView

pytestmark = pytest.mark.anyio


async def test_the_paper_gets_rows_in_step_4_at_80x24(fixture_repo: Path, fixture_pdf: Path, bench: Path) -> None:
    app = make_app(bench)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        screen.go("paper")
        await pilot.pause()
        screen.query_one("#pdf", Input).value = str(fixture_pdf)
        await pilot.press("ctrl+g")
        await wait_for_workers(app, pilot)
        paper = screen.query_one(PaperView).query_one("#paper-text", TextArea)
        assert paper.content_region.height >= 4, paper.content_region  # it was 0: "found" with nothing shown
        assert "A Toy Paper" in screen_text(app)
        assert screen.query_one(PaperView).find_next("method in detail")
        await pilot.pause()
        assert "The method in detail" in screen_text(app)  # the hit is on screen, not only "found"
        instruction = screen.query_one("#instruction", TextArea)
        assert instruction.content_region.height >= 3
        await pilot.resize_terminal(80, 30)  # it had 3 rows at 80x30
        await pilot.pause()
        assert paper.content_region.height >= 7 and instruction.content_region.height >= 7
        await pilot.resize_terminal(80, 24)
        await pilot.pause()

        # The field that takes the keys is unmistakable: tinted in the accent colour (framed where it has a frame).
        accent = app.get_css_variables()["accent"]
        pdf = screen.query_one("#pdf", Input)
        pdf.focus()
        await pilot.pause()
        assert pdf.styles.background_tint.a >= 0.25 and pdf.styles.background_tint.rgb == Color.parse(accent).rgb
        instruction.focus()
        await pilot.pause()
        assert instruction.styles.border_top[1].rgb == Color.parse(accent).rgb

        # ctrl+f shows the focused panel whole and gives the layout back.
        paper.focus()
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert screen.maximized is paper and paper.content_region.height >= 18
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert screen.maximized is None


DPO_INSTRUCTION = (
    "Implement the preference_loss function in dpo/trainers.py following Section 2 of the paper: the DPO loss with "
    "the conservative (label smoothing) variant of Section 2.1, the reference-free variant of Section 2.2, and the "
    "implicit rewards of Section 2.3. Return per-example values; do not reduce."
)


async def test_review_at_80x24_shows_every_key_the_whole_instruction_and_no_model(tmp_path: Path) -> None:
    bench, run = write_review_run(tmp_path)
    set_instructions(bench, DPO_INSTRUCTION)
    app = make_app(bench, review=run, annotator="alice")
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await opened(app, pilot)
        shown = screen_text(app)
        for key in ("1 Wrong", "2 Logic ok", "3 Correct", "u Unsure", "s Skip", "x Clear", "z Undo", "c Note",
                    "n Next", "p Prev", "i Instr", "a Filter", "q Queue", "esc Back", "f1 Help",
                    "j Down", "k Up", "m Agree"):  # fmt: skip
            assert key in shown, (key, shown)
        assert "do not reduce" not in shown  # two lines of it fit ...
        await pilot.press("i")  # ... and i shows it whole
        await pilot.pause()
        assert isinstance(app.screen, TextDialog)
        assert "per-example values; do not reduce." in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen

        # Blind: the run's label (often the model's name) is nowhere, before or after a label.
        assert "toy-model" not in screen_text(app) and str(run) not in screen_text(app)
        (view,) = screen.query_one(CodeDiff).query(WholeDiffView)
        await pilot.press("3")
        await pilot.pause()
        assert screen.query_one(CodeDiff).query(WholeDiffView).first() is view  # the code stays where it was scrolled
        shown = screen_text(app)
        assert "toy-model" not in shown
        assert "Your label: 3 completely correct" in shown  # above the tests and the judge, never below them
        await pilot.press("u")
        await pilot.pause()
        assert "Your label: 3 completely correct (unsure)" in screen_text(app)  # unsure shows at once


async def test_ctrl_c_says_which_keys_quit_and_stop_as_text(bench: Path) -> None:
    app = make_app(bench)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause()
        (note,) = [str(n.message) for n in app._notifications]
        assert "ctrl+q quits" in note and "ctrl+t stops" in note and "[b]" not in note  # it showed "[b]ctrl+q[/b]"


async def test_a_task_set_made_because_the_path_did_not_exist_is_said(tmp_path: Path) -> None:
    app = make_app(tmp_path / "mistyped")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert any("did not exist: it is a new, empty task set" in str(n.message) for n in app._notifications)
    app = make_app(tmp_path / "mistyped")  # there now: nothing to say
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not app._notifications


async def test_an_unticked_retrieval_file_shows_an_empty_box(fixture_repo: Path, bench: Path) -> None:
    from textual.widgets import SelectionList

    app = make_app(bench)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        screen.go("metadata")
        await pilot.pause()
        files = screen.query_one(SelectionList)
        assert files.option_count and not files.selected
        box = files.get_component_styles("selection-list--button")
        assert box.color == box.background  # no X drawn; a ticked one is green
        assert files.get_component_styles("selection-list--button-selected").color != box.background


async def test_a_repository_without_functions_is_no_done_source(tmp_path: Path, make_repo, bench: Path) -> None:
    from lmrbench.tui.widgets.step_list import StepList

    repo = tmp_path / "empty"
    make_repo(repo, {"README.md": "nothing to mask\\n"})
    app = make_app(bench)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_and_clone(app, pilot, repo)
        assert screen.repo is not None and not screen.functions
        assert screen.query_one(StepList).mark("source") != "✔"
        assert ("source", "the repository has no Python function to mask: clone another") in screen.step_problems()


async def test_back_to_metadata_the_focused_title_is_in_view_and_not_selected(fixture_repo: Path, bench: Path) -> None:
    from lmrbench.tui.widgets.metadata_form import MetadataForm
    from lmrbench.tui.widgets.step_list import StepList

    app = make_app(bench)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        screen.go("metadata")
        await pilot.pause()
        title = screen.query_one("#md-paper_name", Input)
        title.value = "zz"
        form = screen.query_one(MetadataForm)
        screen.query_one("#md-retrieval").focus()  # the author went down the form
        await pilot.pause()
        assert form.scroll_y > 0
        screen.query_one(StepList).focus()
        screen.go("function")
        await pilot.pause()
        screen.query_one(StepList).focus()
        await pilot.pause()
        screen.go("metadata")  # what Enter on the step list does
        await pilot.pause()
        await pilot.pause()
        assert app.focused is title
        assert title.selection.is_empty  # never arrives with its text selected
        assert form.region.contains_region(title.region), (form.region, title.region)  # and is on screen
        await pilot.press("x")
        assert title.value == "zzx"  # the key is added where the cursor is, it replaces nothing


async def test_text_typed_on_a_button_is_not_lost_in_silence(fixture_repo: Path, bench: Path) -> None:
    from textual.widgets import Button

    app = make_app(bench)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        screen.go("paper")
        await pilot.pause()
        await pilot.press("tab")  # from the PDF path to Load
        assert isinstance(app.focused, Button)
        await pilot.press("d")
        await pilot.pause()
        assert any("takes no text" in n.message for n in app._notifications)


async def test_ctrl_f_on_the_log_fills_the_screen_at_80x24(fixture_repo: Path, bench: Path) -> None:
    from textual.widgets import RichLog

    from lmrbench.tui.widgets.work_panel import WorkPanel

    app = make_app(bench)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        log = screen.query_one(WorkPanel).query_one(RichLog)
        for n in range(40):
            log.write(f"recording line {n}")
        await pilot.pause()
        assert log.region.height <= 2  # below 36 rows the log yields to the step ...
        log.focus()
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert screen.maximized is log
        assert log.region.height >= 20, log.region  # ... and ctrl+f shows it on the whole screen
        assert "recording line 39" in screen_text(app)


async def test_below_80x24_the_app_says_so(bench: Path) -> None:
    app = make_app(bench)
    async with app.run_test(size=(70, 20)) as pilot:
        await pilot.pause()
        assert any("70x20" in n.message and "80x24" in n.message for n in app._notifications)


async def test_a_found_heading_opens_near_the_top_of_the_paper(fixture_repo: Path, bench: Path, tmp_path: Path) -> None:
    import pymupdf

    def write_pdf(path: Path, pages: list[str]) -> Path:
        doc = pymupdf.open()
        for text in pages:
            doc.new_page().insert_textbox(pymupdf.Rect(50, 50, 550, 800), text, fontsize=11)
        doc.save(path)
        doc.close()
        return path

    body = "\n".join(f"line {n} of the introduction" for n in range(24))
    pdf = write_pdf(tmp_path / "long.pdf", ["A Toy Paper\nAbstract.",  # the heading is on another page
                                            body + "\n3 Method in detail\n" + body])
    app = make_app(bench)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_and_clone(app, pilot, fixture_repo)
        screen.go("paper")
        screen.query_one("#pdf", Input).value = str(pdf)
        await pilot.press("ctrl+g")
        await wait_for_workers(app, pilot)
        paper = screen.query_one(PaperView)
        assert paper.find_next("Method in detail")
        await pilot.pause()
        await pilot.pause()
        area = paper.query_one(TextArea)
        row = area.selection.start[0]
        assert row > area.scrollable_content_region.height  # the heading is below the first screenful ...
        assert 0 <= row - area.scroll_offset.y <= 1, (row, area.scroll_offset.y)  # ... and shown at the top
