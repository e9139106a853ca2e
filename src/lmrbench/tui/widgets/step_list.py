"""The visible list of a guided flow's steps; any step can be revisited."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option


class StepList(OptionList):
    """Steps with a mark: ✔ done, ! a problem to fix, · to do; the current step is bold and highlighted.

    Posts Chosen when the author picks one.
    """

    DEFAULT_CSS = """
    StepList {
        width: 26; height: 1fr; border: none; border-right: solid $primary-darken-2;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    @dataclass
    class Chosen(Message):
        """The author picked a step."""

        step: str

    def __init__(self, steps: list[tuple[str, str]], *, id: str | None = None) -> None:
        self.steps = steps
        self.states: dict[str, str] = {}
        self.current = steps[0][0]
        super().__init__(*self._step_options(), id=id)

    def _step_options(self) -> list[Option]:
        out = []
        for n, (key, title) in enumerate(self.steps, 1):
            state = self.states.get(key, "")
            mark = {"done": "✔", "problem": "!"}.get(state, "·")
            style = {"done": "green", "problem": "red"}.get(state, "")
            if key == self.current:
                style += " bold"
            out.append(Option(Text(f"{mark} {n}. {title}", style=style.strip()), id=key))
        return out

    def mark(self, key: str) -> str:
        """The mark shown for a step."""
        return {"done": "✔", "problem": "!"}.get(self.states.get(key, ""), "·")

    def update_marks(self, current: str, states: dict[str, str]) -> None:
        """Redraw the marks (``states``: step -> "done" or "problem")."""
        self.current = current
        self.states = dict(states)
        for i, option in enumerate(self._step_options()):
            self.replace_option_prompt_at_index(i, option.prompt)
        self.highlighted = [k for k, _ in self.steps].index(current)

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(self.Chosen(str(event.option.id)))
