"""The command palette lists every binding of the active screen; choosing one only posts a message."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from lmrbench.tui.messages import RunAction

SYSTEM = frozenset({"command_palette", "quit", "screenshot"})
"""Actions the palette already lists as Textual's system commands (Quit, Keys, Screenshot): never twice."""


class ScreenActions(Provider):
    """Every action bound on the active screen and the app, by its description."""

    def _entries(self) -> list[tuple[str, str, RunAction]]:
        out: list[tuple[str, str, RunAction]] = []
        seen: set[str] = set()
        for key, active in self.screen.active_bindings.items():
            b = active.binding
            if active.node not in (self.screen, self.app):  # widgets' own keys (cursor moves) stay out
                continue
            if not b.description or b.action in seen or b.action.removeprefix("app.") in SYSTEM:
                continue
            seen.add(b.action)
            help_text = f"{b.tooltip or b.description} ({key})"
            out.append((b.description, help_text, RunAction(active.node, b.action)))
        return out

    async def discover(self) -> Hits:
        """Show every action before the user types."""
        for text, help_text, message in self._entries():
            yield DiscoveryHit(text, partial(self.app.post_message, message), help=help_text)

    async def search(self, query: str) -> Hits:
        """Fuzzy-match the actions' descriptions."""
        matcher = self.matcher(query)
        for text, help_text, message in self._entries():
            score = matcher.match(text)
            if score > 0:
                run = partial(self.app.post_message, message)
                yield Hit(score, matcher.highlight(text), run, help=help_text)
