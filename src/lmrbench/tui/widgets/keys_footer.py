"""The footer of every screen: below 120 columns compact and without the palette hint (F1 lists ctrl+p), so the
keys a screen shows fit whole at 80 columns."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.app import ComposeResult
from textual.widgets import Footer

if TYPE_CHECKING:
    from textual.screen import Screen

WIDE = 120
"""From this many columns the footer has its usual spacing and shows ``^p palette``."""


class KeysFooter(Footer):
    """Textual's footer, narrowed on narrow terminals; ``rows`` above 1 lays the keys out in that many rows (a
    screen with more keys than one row holds at 80 columns, styled ``height: rows; layout: grid`` in app.tcss)."""

    def __init__(self, *, rows: int = 1) -> None:
        super().__init__()
        self.rows = rows
        self._shown: tuple | None = None

    def bindings_changed(self, screen: Screen) -> None:
        """Textual rebuilds the footer's keys each time the focus moves; rebuild only when the keys it shows (or
        their enabled state) changed: moving between two fields restyled some 40 widgets per key press."""
        shown = tuple((b.key, b.action, b.description, enabled, tooltip, b.group)
                      for _node, b, enabled, tooltip in screen.active_bindings.values() if b.show)
        current = screen.app.app_focus and self.is_attached and screen is self.screen  # Textual rebuilds only then
        if current and self._bindings_ready and shown == self._shown:
            return
        super().bindings_changed(screen)
        if current:
            self._shown = shown

    def compose(self) -> ComposeResult:
        """Textual's keys, in ``rows`` rows."""
        keys = list(super().compose())
        if self.rows > 1:
            self.styles.grid_size_columns = max(1, -(-len(keys) // self.rows))
        yield from keys

    def on_mount(self) -> None:
        """Fit the terminal's width."""
        self._fit(self.app.size.width)

    def on_resize(self, event: events.Resize) -> None:
        """Fit again when the terminal is resized."""
        self._fit(self.app.size.width)

    def _fit(self, width: int) -> None:
        self.compact = width < WIDE
        self.show_command_palette = width >= WIDE
