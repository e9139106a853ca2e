"""A Progress that keeps the log lines (`from helpers.progress_lines import Lines`)."""

from __future__ import annotations


class Lines:
    """A Progress that keeps the log lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def start(self, label: str, total: int | None) -> None:
        pass

    def advance(self, n: int = 1, detail: str = "") -> None:
        pass

    def log(self, line: str) -> None:
        self.lines.append(line)
