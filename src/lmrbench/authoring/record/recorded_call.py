"""The typed items a recording's calls travel as on the host: a recorded call (one line of the recorder's
``calls-<pid>.jsonl``, or a case the probe added), for an added case how the probe made it (an entry of
``probe.json``'s ``amplified``), and what each recorded process says of its run (``summary-<pid>.json``, with the
calls it could not keep).

The sandbox side (``runtime/lmrbench_record.py``, ``runtime/lmrbench_probe.py``) keeps writing plain JSON: lmrbench
is not installed there. Each item is built once, here, where the host reads that JSON; a field that is missing
or of the wrong type is a one-line ``LmrError`` naming the file (and the line or entry). Nothing on disk changes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast

from lmrbench.errors import LmrError

Scalar = bool | int | float | str
"""A parameter's value as recorded calls vary it: a flag, a number or a text mode."""
Arc = tuple[int, int]
"""A traced (from line, to line) step of a body; negative numbers are its entry and exits."""
Replay = Literal["identical", "close", "raised", "checker", "different"]
"""What replaying a call from its recorded inputs gave: the same result exactly, within the tolerance, an
exception, a result the implementation's checker rejects, or a different result."""
AddedKind = Literal["value", "pair", "all", "noise", "search", "scan"]
"""How an added case varies its base call: parameters set (one, or a ``pair``), every entry of the arrays that
hold an int parameter set to it (``all``), masked-out entries filled with noise, an input the search found
that kills a mutant no other case killed (``search``), or an input a recorded driver never gives, tried whatever
mutants live (``scan``: a value the body refuses, padding at the other end, arrays far from zero)."""

_REPLAYS: tuple[Replay, ...] = ("identical", "close", "raised", "checker", "different")
_KINDS: tuple[AddedKind, ...] = ("value", "pair", "all", "noise", "search", "scan")


@dataclass(frozen=True)
class Amplification:
    """How the probe made a case the recording lacked, from a recorded call (``amplify_plans`` plans it,
    ``lmrbench_probe`` makes it on the golden code)."""

    file: str
    """The new case file in the probe's output folder (``amp-<target>-<plan>-<k>.npz``)."""
    param: str
    """The parameter (or ``self.<attr>``) the plan varies."""
    value: Scalar | None
    """The value it was given (None where the variant sets no value of it: a fill, or noise)."""
    settings: dict[str, Scalar]
    """Every parameter the variant set, with its value (``set`` in the probe's report)."""
    kind: AddedKind
    fill: tuple[str, ...]
    """Array parameters every entry of which was set to ``param``'s value (``kind`` ``all``)."""
    noise: dict[str, str]
    """Where noise went: ``{"mask": name}`` or ``{"where": array, "equals": param}`` (``kind`` ``noise``)."""
    base: str
    """The recorded case file the variant was made from."""
    when: dict[str, Scalar]
    """A flag's value the case combines ``param`` with (a combination no recorded call had), else empty."""
    effective: tuple[str, ...]
    """For a ``pair``: the parameters whose change alone changes the result."""

    @classmethod
    def from_json(cls, data: object, source: Path, where: str) -> Amplification:
        """The entry ``data`` of ``source`` (``where`` says which), or LmrError naming both."""
        f = _Fields(data, source, where)
        return cls(
            file=f.file_name("file"),
            param=f.text("param"),
            value=f.scalar_or_none("value"),
            settings=f.scalar_map("set"),
            kind=cast(AddedKind, f.choice("kind", _KINDS)),
            fill=f.texts("fill"),
            noise=f.text_map("noise"),
            base=f.text("base"),
            when=f.scalar_map("when"),
            effective=f.texts("effective"),
        )


@dataclass(frozen=True)
class RecordedCall:
    """One distinct call of a goal function saved as a case file: as the recorder wrote it, or added by the probe
    (``amplified`` set)."""

    file: str
    """The case file's name in the output folder (``case-<pid>-<seq>.npz``, ``amp-...npz``)."""
    path: Path
    """Where the case file is on the host."""
    target: str
    """The goal function, ``<goal file>::<qualname>``."""
    digest: str
    """SHA-256 of the encoded inputs: two calls with the same digest are the same call."""
    size: int
    """Bytes of the case file."""
    sizes: dict[str, int]
    """Bytes of each part of the recorded data (arguments, instance, results, random state)."""
    drew_random: bool
    """The call moved the global random state (the case keeps the state from before it)."""
    replay: Replay
    replay_detail: str
    """Why a replay was not identical ("" when it was)."""
    arcs: tuple[Arc, ...] | None
    """The body's arcs the call took (None when not traced)."""
    time: float
    pid: int
    seq: int
    """When and in which process the call was saved (its order among all calls), and its number there."""
    amplified: Amplification | None = None
    """Set for a case the probe added."""

    @classmethod
    def from_line(cls, data: object, out: Path, source: Path, where: str) -> RecordedCall:
        """The recorder's line ``data`` (``where`` in ``source``; its case file in ``out``), or LmrError naming
        both."""
        f = _Fields(data, source, where)
        file = f.file_name("file")
        return cls(
            file=file,
            path=out / file,
            target=f.text("target"),
            digest=f.text("digest"),
            size=f.integer("bytes"),
            sizes=f.integer_map("sizes"),
            drew_random=f.flag("drew_random"),
            replay=cast(Replay, f.choice("replay", _REPLAYS)),
            replay_detail=f.text("replay_detail"),
            arcs=f.arcs("arcs"),
            time=f.number("time"),
            pid=f.integer("pid"),
            seq=f.integer("seq"),
        )

    @classmethod
    def added(cls, made: Amplification, path: Path, target: str, digest: str, time: float, seq: int) -> RecordedCall:
        """A case the probe added (``made``, its file at ``path``): its golden result is its expected value, so it
        replays identically by construction, and it was never traced."""
        return cls(file=made.file, path=path, target=target, digest=digest, size=path.stat().st_size, sizes={},
                   drew_random=False, replay="identical", replay_detail="", arcs=None, time=time, pid=0, seq=seq,
                   amplified=made)


@dataclass(frozen=True)
class SkippedCall:
    """A call the recorder could not keep (a value it cannot save, a precision-sensitive result)."""

    target: str
    message: str
    """Why, as one line that names the target."""
    precision: str = ""
    """For a precision-sensitive call: what moved when its precision was changed."""


@dataclass(frozen=True)
class RecorderSummary:
    """What one recorded process says of its run (its ``summary-<pid>.json``)."""

    pid: int
    calls: int
    """Calls of the goal functions seen."""
    saved: dict[str, int]
    """Target -> calls saved."""
    patched: tuple[str, ...]
    """Targets whose function the recorder replaced by its wrapper."""
    main_is_goal: bool
    """The goal file ran as the main script (its functions are then never recorded)."""
    reached: dict[str, tuple[Arc, ...]]
    """Target -> the body's arcs taken over all its calls."""
    skipped: tuple[SkippedCall, ...]
    """The first calls that could not be kept."""
    unsaved: dict[str, int] = field(default_factory=dict)
    """Target -> calls that could not be kept, every one (none in a summary written before it was counted)."""

    @classmethod
    def from_json(cls, data: object, source: Path) -> RecorderSummary:
        """The summary ``data`` read from ``source``, or LmrError naming it."""
        f = _Fields(data, source, "summary")
        notes = []
        for k, note in enumerate(f.objects("skipped"), 1):
            n = _Fields(note, source, f"skipped note {k}")
            notes.append(SkippedCall(n.text("target"), n.text("message"), n.text("precision", "")))
        return cls(pid=f.integer("pid"), calls=f.integer("calls"), saved=f.integer_map("saved"),
                   patched=f.texts("patched"), main_is_goal=f.flag("main_is_goal"), reached=f.arcs_map("reached"),
                   skipped=tuple(notes), unsaved=f.integer_map("unsaved") if "unsaved" in f.data else {})


def recorder_error(data: object, source: Path) -> str:
    """The message of the recorder's ``error-<pid>.json`` (``data``, read from ``source``), or LmrError naming it."""
    return _Fields(data, source, "error").text("message")


class _Fields:
    """The fields of one JSON object of a file the sandbox wrote, each checked as it is taken."""

    def __init__(self, data: object, source: Path, where: str) -> None:
        if not isinstance(data, dict):
            raise LmrError(f"{where}: not a JSON object", source)
        self.data: dict[str, object] = data
        self.source = source
        self.where = where

    def take(self, name: str, ok: Callable[[object], bool], want: str) -> object:
        """The field's value, or LmrError when it is missing or ``ok`` rejects it."""
        if name not in self.data:
            raise LmrError(f"{self.where}: field {name!r} is missing (want {want})", self.source)
        value = self.data[name]
        if not ok(value):
            raise LmrError(f"{self.where}: field {name!r} is {type(value).__name__} {str(value)[:60]!r} "
                           f"(want {want})", self.source)
        return value

    def text(self, name: str, default: str | None = None) -> str:
        if default is not None and name not in self.data:
            return default
        return cast(str, self.take(name, _is_str, "a string"))

    def file_name(self, name: str) -> str:
        return cast(str, self.take(name, _is_file_name, "a file name"))

    def integer(self, name: str) -> int:
        return cast(int, self.take(name, _is_int, "an integer"))

    def number(self, name: str) -> float:
        return float(cast(float, self.take(name, _is_number, "a number")))

    def flag(self, name: str) -> bool:
        return cast(bool, self.take(name, _is_bool, "true or false"))

    def choice(self, name: str, options: tuple[str, ...]) -> str:
        return cast(str, self.take(name, lambda v: v in options, f"one of {', '.join(options)}"))

    def scalar_or_none(self, name: str) -> Scalar | None:
        ok = _either(_is_none, _is_scalar)
        return cast(Scalar | None, self.take(name, ok, "a bool, number, string or null"))

    def texts(self, name: str) -> tuple[str, ...]:
        return tuple(cast(list[str], self.take(name, _list_of(_is_str), "a list of strings")))

    def text_map(self, name: str) -> dict[str, str]:
        return cast(dict[str, str], self.take(name, _map_of(_is_str), "an object of strings"))

    def integer_map(self, name: str) -> dict[str, int]:
        return cast(dict[str, int], self.take(name, _map_of(_is_int), "an object of integers"))

    def scalar_map(self, name: str) -> dict[str, Scalar]:
        ok = _map_of(_is_scalar)
        return cast(dict[str, Scalar], self.take(name, ok, "an object of bools, numbers and strings"))

    def objects(self, name: str) -> list[object]:
        return cast(list[object], self.take(name, _list_of(_is_object), "a list of objects"))

    def arcs(self, name: str) -> tuple[Arc, ...] | None:
        ok = _either(_is_none, _list_of(_is_arc))
        found = cast(list[list[int]] | None, self.take(name, ok, "a list of [from, to] line pairs or null"))
        return None if found is None else tuple((a, b) for a, b in found)

    def arcs_map(self, name: str) -> dict[str, tuple[Arc, ...]]:
        ok = _map_of(_list_of(_is_arc))
        found = cast(dict[str, list[list[int]]], self.take(name, ok, "an object of lists of [from, to] line pairs"))
        return {k: tuple((a, b) for a, b in v) for k, v in found.items()}


Check = Callable[[object], bool]


def _is_str(v: object) -> bool:
    return isinstance(v, str)


def _is_int(v: object) -> bool:
    return type(v) is int  # not a bool


def _is_number(v: object) -> bool:
    return type(v) in (int, float)


def _is_bool(v: object) -> bool:
    return type(v) is bool


def _is_none(v: object) -> bool:
    return v is None


def _is_object(v: object) -> bool:
    return isinstance(v, dict)


def _is_scalar(v: object) -> bool:
    return type(v) in (bool, int, float, str)


def _is_file_name(v: object) -> bool:
    return isinstance(v, str) and bool(v) and "/" not in v and v not in (".", "..")


def _is_arc(v: object) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(_is_int(n) for n in v)


def _list_of(ok: Check) -> Check:
    return lambda v: isinstance(v, list) and all(ok(x) for x in v)


def _map_of(ok: Check) -> Check:
    return lambda v: isinstance(v, dict) and all(isinstance(k, str) and ok(x) for k, x in v.items())


def _either(a: Check, b: Check) -> Check:
    return lambda v: a(v) or b(v)
