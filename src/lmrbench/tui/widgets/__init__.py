"""Reusable widgets, each with its DEFAULT_CSS."""
