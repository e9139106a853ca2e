"""The ``lmrbench`` command line: one typer sub-app per stage, all calling the headless core."""
