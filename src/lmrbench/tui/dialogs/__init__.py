"""Modal dialogs returning a value with dismiss."""
