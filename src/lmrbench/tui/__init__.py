"""The Textual authoring app: screens and widgets only; every action calls authoring/ or benchmark/."""
