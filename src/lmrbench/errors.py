"""The one exception type the user sees: a single line naming the file and the problem."""

from __future__ import annotations

from pathlib import Path


class LmrError(Exception):
    """A user-facing error. ``str(err)`` is one line: ``<path>: <problem>`` when a path is known."""

    def __init__(self, problem: str, path: str | Path | None = None) -> None:
        self.problem = " ".join(str(problem).split())
        self.path = None if path is None else str(path)
        super().__init__(f"{self.path}: {self.problem}" if self.path else self.problem)


class NotRun(LmrError):
    """The command could not run what it was asked to (an endpoint that does not answer, an environment that cannot
    be had): the command line exits 3, as for problems left to a re-run."""


class EnvironmentUnavailable(NotRun):
    """A task's environment cannot be had, so no test of it can run. ``cause``: ``image`` (a FROM that is not here
    and cannot be pulled), ``requirement`` (a requirement pip cannot resolve or install) or ``environment``
    (anything else); ``output``: the tool's whole output, when one failed."""

    def __init__(self, problem: str, path: str | Path | None = None, *, cause: str = "environment",
                 output: str = "") -> None:
        super().__init__(problem, path)
        self.cause = cause
        self.output = output


class UsageError(LmrError):
    """A bad value or combination of a command's options (``--sandbox podman``, ``--function bad``): the command
    line exits 2 as click's own usage errors do, where any other LmrError exits 1."""
