"""The Textual authoring app: screens, widgets and dialogs only; every action calls authoring/ or benchmark/,
and worker outcomes are shown by one handler (workers.py)."""
