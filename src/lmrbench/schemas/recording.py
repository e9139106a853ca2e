"""The index of an implementation's recorded calls: ``<repo>/unit_test/data/impl_<k>/index.json``.

Beside it, one ``<name>.npz`` per case: numpy arrays plus ``__case__``, the call as UTF-8 JSON (arguments
bound by the signature, the instance's attributes for methods, the return value, arguments and attributes the
call changed, the random state when the call drew random numbers). The value encoding is documented in
``lmrbench/runtime/lmrbench_values.py``, which the tests load the cases with.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from lmrbench.schemas.task_info import CheckerSettings


class RecordedCase(BaseModel):
    """One distinct call of a goal function."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    file: str
    """The case file, relative to the index's folder (``case_1.npz``)."""
    test: str
    """The test function that checks it (``test_case_1``)."""
    target: str
    """The goal function, ``<goal file>::<qualname>``."""
    binding: Literal["function", "method", "classmethod", "staticmethod"]
    """How the function is called: plain, on an instance rebuilt from its attributes, or on its class."""
    bytes: int
    """Size of the case file."""
    digest: str
    """SHA-256 of the encoded inputs: two calls with the same digest are the same call."""
    arguments: dict[str, str]
    """Each argument with a short description (``float32[4, 2]``, ``0.1``)."""
    returns: str
    """A short description of the return value."""
    changed: list[str] = []
    """Arguments the call changed in place (the test checks them too)."""
    state_changed: bool = False
    """Whether the call changed the instance's attributes (the test checks them too)."""
    random_state: bool = False
    """Whether the call drew random numbers (the test restores the recorded random state first)."""
    replay: Literal["identical", "close"] = "identical"
    """Replaying the call from the saved inputs gave the same result exactly, or within the tolerance."""
    amplified: str = ""
    """Set for a case the recording added: a recorded call with one parameter varied (``beta=0.3``), the
    golden code giving the expected value."""


class BodyCoverage(BaseModel):
    """How much of one goal function's body the recorded cases run (traced while recording)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    target: str
    """The goal function, ``<goal file>::<qualname>``."""
    lines_total: int
    """Statements of the body (docstring excluded)."""
    lines_covered: int
    """Statements the kept cases run."""
    branches_total: int
    """Branch arcs of the body (the ways out of a line with more than one)."""
    branches_covered: int
    """Branch arcs the kept cases take."""
    missing_lines: list[int] = []
    """Statements no kept case runs (line numbers of the golden file)."""
    reached_not_kept: list[int] = []
    """Of those, the ones the command ran in calls that were not kept."""


class AmplifiedParameter(BaseModel):
    """A parameter the recorded calls never varied, and the cases added with it varied."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    target: str
    """The goal function, ``<goal file>::<qualname>``."""
    param: str
    """The parameter."""
    recorded: str
    """Its one value in the recording (source text)."""
    values: list[str]
    """The values of the added cases (source text)."""
    cases: list[str]
    """The added case files."""


def tried_text(tried: Sequence[str], inputs: int, limit: int = 8) -> str:
    """``42 input(s): gamma=0.5, labels=None and 12 more``: what a search tried, the same wherever it is told."""
    if not tried:
        return "no input (none could be made)"
    more = f" and {len(tried) - limit} more" if len(tried) > limit else ""
    return f"{inputs} input(s): {', '.join(tried[:limit])}{more}"


class MutantSearch(BaseModel):
    """What the recording's search for a killing input found for one mutant the kept cases let live."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    outcome: Literal["killed", "live", "equivalent"]
    """killed: an input was found and kept as a new case; live: none was found among those tried;
    equivalent: random inputs of the recorded shapes did not separate it either."""
    input: str = ""
    """For killed: the input that kills it (``step=150, warmup_steps=10``)."""
    case: str = ""
    """For killed: the case file added with it."""
    tried: list[str] = []
    """What was varied, in words (``warmup_steps in 9, 10, 11``)."""
    inputs: int = 0
    """How many inputs were tried."""
    tied: list[str] = []
    """For live: leaves tied to the arrays' shapes (a head count) that no input could vary."""
    outside: str = ""
    """For live: an input outside what the recorded calls pass that separates it (``0/1 float arrays given values
    between 0 and 1``); not made a case, since a correct program may rely on what every caller passes."""
    knife: bool = False
    """For live: only knife-edge inputs separate it (a one-ulp move of the input changes the golden result), so no
    fair case can: a wrong answer of its shape passes."""
    unmet: str = ""
    """For live: the comparison whose boundary it moves that no input tried met (``> score_threshold``)."""
    replaced: str = ""
    """For live: the array of ``self`` it replaces where the golden code changes it in place (``self.u``), which
    nothing else the recorded program holds, so no test can tell the two apart."""


class MutantCatch(BaseModel):
    """One mutant of the golden body tried on the recorded calls while recording."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    target: str
    """The goal function, ``<goal file>::<qualname>``."""
    digest: str
    """Hash of the mutated goal file (validation finds the same mutant by it)."""
    kind: str
    """The kind of mutation."""
    description: str
    """What was changed."""
    killed: bool
    """The kept cases kill it."""
    pinned: str = ""
    """For a ``pin_parameter`` mutant: the parameter it pins (empty in files written before this field)."""
    equivalent: bool = False
    """No recorded or added call tells it from the golden code: equivalent on every recorded input (not
    counted against the tests)."""
    hint: str = ""
    """For an equivalent mutant shaped like a real mistake: what case would kill it (the task is then valid but
    weak)."""
    search: MutantSearch | None = None
    """The search for an input that kills it, when the kept cases did not (absent in older files)."""


class SearchSummary(BaseModel):
    """What the search for killing inputs did for one goal function while recording."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    target: str
    """The goal function, ``<goal file>::<qualname>``."""
    searched: int
    """Mutants that no recorded or added case killed, searched for."""
    killed: int
    """Of those, mutants a new case (an input the search found) kills."""
    live: int
    """Mutants no stable input separated, not shown equivalent."""
    equivalent: int
    """Mutants no input separated, random inputs of the recorded shapes included."""
    inputs: int
    """Inputs the search tried."""


class RecordingIndex(BaseModel):
    """How one implementation's cases were recorded, and the cases."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    schema_version: int = 1
    """Version of this format."""
    implementation: int
    """The implementation's index in info.json."""
    command: str
    """The command that ran the reference code."""
    sandbox: str = Field(validation_alias=AliasChoices("sandbox", "runner"))
    """The sandbox that ran it (docker or local; older files call it ``runner``)."""
    recorded_at: datetime
    """When the recording finished (UTC)."""
    max_calls: int
    """At most this many distinct calls were kept per goal function."""
    checker: CheckerSettings
    """The checker the generated test uses."""
    self_factory: str | None = None
    """``module:function`` building the instance of a method, when the author named one."""
    cases: list[RecordedCase]
    """The recorded calls, in the order they happened."""
    coverage: list[BodyCoverage] = []
    """Line and branch coverage of each goal function's golden body by the cases (empty when not traced)."""
    selection: list[str] = []
    """What the recording said about the cases: kept and dropped calls, added cases, kill rates per kind."""
    amplified: list[AmplifiedParameter] = []
    """Parameters the recorded calls never varied, and the cases added with them varied."""
    unvaried: list[str] = []
    """Scalar parameters that no case varies (``beta``, or ``Class.method: beta`` for several goal functions)."""
    pins: dict[str, dict[str, str]] = {}
    """Per goal function, the recorded value of each scalar parameter (what ``pin_parameter`` mutants pin)."""
    grad: list[str] = []
    """Goal functions whose recorded results require grad (``detach`` mutants apply to them)."""
    mutants: list[MutantCatch] = []
    """The mutants tried on the calls while recording (empty when not tried)."""
    search: list[SearchSummary] = []
    """Per goal function, what the search for inputs that kill the mutants the cases missed did."""
