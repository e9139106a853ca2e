"""The new-task flow's steps: their order, which step is shown and which were visited, and each step's mark.

A step's mark says whether its part is done (✔) or has a problem (!), not that it was visited.
"""

from __future__ import annotations

STEPS = [
    ("source", "Source"),
    ("function", "Function"),
    ("mask", "Mask"),
    ("paper", "Paper & instruction"),
    ("metadata", "Metadata"),
    ("tests", "Tests"),
    ("validate", "Build & validate"),
    ("save", "Save"),
]
"""The new-task flow's steps (key, title), in order."""
KEYS = [k for k, _ in STEPS]
FOCUS = {
    "source": "#source",
    "function": "#fp-search",
    "mask": "#mask-style",
    "paper": "#pdf",
    "metadata": "#md-paper_name",
    "tests": "#tests-cmd",
    "validate": "#validate",
    "save": "#save",
}
"""The widget each step focuses when shown."""
STEP_WORK = {"source": "clone", "paper": "paper", "tests": "tests", "validate": "validate", "save": "save"}
"""The worker group each step's ctrl+g starts."""


def numbered(problems: list[tuple[str, str]]) -> list[str]:
    """(step, what to do) as lines that name their step: ``step 4: write the instruction``."""
    return [f"step {KEYS.index(step) + 1}: {text}" for step, text in problems]


class StepTracker:
    """Which step is shown, the steps visited, the steps a refused validate or save named, and the marks."""

    def __init__(self) -> None:
        self.current = "source"
        self.visited: set[str] = {"source"}
        self.flagged: set[str] = set()
        """Steps a refused validate or save named: marked ! until their part is done."""

    def enter(self, step: str) -> None:
        """Show ``step`` (any step can be revisited)."""
        self.current = step
        self.visited.add(step)

    def next(self) -> str:
        """The step after the current one (the last stays the last)."""
        return KEYS[min(KEYS.index(self.current) + 1, len(KEYS) - 1)]

    def flag(self, problems: list[tuple[str, str]]) -> list[str]:
        """Mark the steps ``problems`` name until their part is done; the problems as ``numbered`` lines."""
        self.flagged = {step for step, _ in problems}
        return numbered(problems)

    def states(self, complete: dict[str, bool], validation: str) -> dict[str, str]:
        """Each step's state: "done" when ``complete`` says its part is, "problem" when a flagged or visited step
        (other than the current one and Save) is not, or when the ``validation`` is "stale"."""
        out = {}
        for key, ok in complete.items():
            if ok:
                out[key] = "done"
            elif key in self.flagged or (key in self.visited and key not in (self.current, "save")):
                out[key] = "problem"
        if validation == "stale":
            out["validate"] = "problem"
        return out
