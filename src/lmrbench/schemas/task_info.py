"""info.json: the official LMR-Bench task description, read and written with its own field names.

Real files are messier than the paper: ``retrieval_content`` (what the official generator reads, and what new
tasks get) is also spelled ``retrieval_context``, ``category`` is free text
or missing, ``instance_id`` is once a string, ``goal_file``/``unit_test_file`` are sometimes lists. All of that
loads; unknown keys and the spelling used survive a load/save round trip. Every key lmrbench reads is a field
here (and so in ``schema/info.schema.json``); one that lmrbench reads only at the other level (``isolation`` at the
top, ``resources`` in an implementation) is refused with where it belongs, never silently ignored.
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from lmrbench import jsonsafe
from lmrbench.errors import LmrError
from lmrbench.fsutil import atomic_write_json, read_capped
from lmrbench.schemas.categories import Category, category_from_text

INFO_JSON = "info.json"


def _check_rel(path: str, what: str) -> str:
    """A relative POSIX path that stays inside its base folder, or ValueError."""
    if not isinstance(path, str) or not path:
        raise ValueError(f"{what} is empty")
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":"):
        raise ValueError(f"{what} {path!r} is absolute; it must be relative to the task folder")
    norm = posixpath.normpath(path.replace("\\", "/"))
    if norm == ".." or norm.startswith("../"):
        raise ValueError(f"{what} {path!r} leaves the task folder")
    return path


def as_list(value: str | list[str] | None) -> list[str]:
    """Official fields that are 'a path or a list of paths' as a list."""
    if value is None or value == "":
        return []
    return [value] if isinstance(value, str) else list(value)


MAX_INFO_BYTES = 10 << 20
"""Largest info.json read (checked before reading)."""

class CheckerSettings(BaseModel):
    """How recorded outputs are compared with a candidate's (an lmrbench addition to info.json)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    kind: str = "numeric"
    """One of exact, numeric, unordered, text."""
    tolerance: Literal["dtype", "explicit"] = "dtype"
    """dtype: each value's tolerance follows its dtype (float64, float32, float16, bfloat16) and the inputs'
    magnitude (``rtol``/``atol`` unused); explicit: ``rtol`` and ``atol`` as written, for every value. A file
    without this key is explicit when its rtol or atol differ from the old defaults (1e-5, 1e-8), which an author
    wrote."""
    rtol: float = 1e-5
    """Relative tolerance of the numeric checker (with ``tolerance: explicit``)."""
    atol: float = 1e-8
    """Absolute tolerance of the numeric checker (with ``tolerance: explicit``)."""
    text_threshold: float = 0.9
    """Minimum similarity ratio of the text checker."""

    @model_validator(mode="before")
    @classmethod
    def _explicit_when_written(cls, data: Any) -> Any:
        if isinstance(data, dict) and "tolerance" not in data:
            written = data.get("rtol", 1e-5) != 1e-5 or data.get("atol", 1e-8) != 1e-8
            data = {**data, "tolerance": "explicit" if written else "dtype"}
        return data


def _older_spelling(schema: dict[str, Any]) -> None:
    """The JSON Schema also lists ``retrieval_context``, the spelling many official files use."""
    props = schema.get("properties", {})
    if "retrieval_content" in props:
        props["retrieval_context"] = {**props["retrieval_content"],
                                      "description": "The same list as retrieval_content, spelled as many official "
                                                     "files spell it (one of the two, not both)."}


def _misplaced(data: Any, here: frozenset[str], where: str, belongs: str) -> None:
    """ValueError naming a key of ``data`` that lmrbench reads only elsewhere, and where it belongs."""
    if not isinstance(data, dict):
        return
    for key in data:
        if key in here:
            raise ValueError(f"{key!r} is {where}, where lmrbench does not read it: it belongs {belongs}")


class Implementation(BaseModel):
    """One masked function (or set of functions) of a task, with its instruction and tests."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, use_attribute_docstrings=True,
                              json_schema_extra=_older_spelling)

    instruction: str = ""
    """What the model is asked to implement, as shown to it."""
    index: int
    """The implementation's number within the task, unique, from 1."""
    category: str | None = None
    """The category as written in the file (free text, kept as is); see ``category_normalized``."""
    goal_file: str | list[str]
    """The file holding the masked function, relative to the repository folder."""
    goal_function: str | list[str] = ""
    """The masked function's name (a method's name without its class)."""
    class_name: str = ""
    """The class of a masked method, or empty for a module-level function."""
    goal_line: int | None = Field(default=None, ge=1)
    """lmrbench: when the goal file defines the goal function's name more than once (in two branches of an
    ``if``), the first line (in the golden file) of the one definition masked; absent: every definition."""
    golden_file: str | list[str] = ""
    """The whole unmasked goal file, relative to the task folder."""
    retrieval_context: list[str] = Field(
        default_factory=list, validation_alias=AliasChoices("retrieval_content", "retrieval_context")
    )
    """Repository files given to the model as context (``retrieval_content``, the official generator's spelling;
    also read as ``retrieval_context``)."""
    unit_test_file: str | list[str] = ""
    """The unit test file(s), relative to the repository folder."""
    checker: CheckerSettings | None = None
    """lmrbench: the checker the generated tests use (absent in official files)."""
    isolation: Literal["split", "shared"] | None = None
    """lmrbench: "shared" runs the tests in the candidate's process, for arguments the value codec cannot carry
    (weaker evidence, and every report says so); absent or "split": the candidate's code runs in a worker process
    of its own that never sees the tests or their data."""
    trusted_files: str | list[str] = Field(default_factory=list)
    """lmrbench: more paths the tests read (relative to the repository folder; files or folders), trusted like
    ``unit_test/``: kept out of the candidate's view and out of agent bundles. The key belongs to each
    implementation (``validate`` adds there what the golden runs' tests read); there is no task-level one. The
    grader, ``export-agent`` and ``task check`` read it through ``core.trust.trusted_paths``."""

    _retrieval_key: str = PrivateAttr(default="retrieval_content")
    """The spelling written back: the one read, else the official generator's ``retrieval_content``."""

    @model_validator(mode="before")
    @classmethod
    def _remember_spelling(cls, data: Any) -> Any:
        _misplaced(data, TASK_LEVEL_KEYS - {"instance_id", "folder_name"}, "in an implementation",
                   "at the top level of info.json")
        if isinstance(data, dict) and "retrieval_context" in data and "retrieval_content" in data:
            raise ValueError("both retrieval_content and retrieval_context are given: keep one (retrieval_content)")
        if isinstance(data, dict) and "retrieval_context" in data and "retrieval_content" not in data:
            data = dict(data)
            data["__retrieval_key"] = "retrieval_context"
        return data

    def model_post_init(self, context: Any) -> None:  # noqa: D102
        extra = self.__pydantic_extra__ or {}
        if extra.pop("__retrieval_key", None):
            self._retrieval_key = "retrieval_context"

    @model_validator(mode="after")
    def _paths_stay_inside(self) -> Implementation:
        for f in as_list(self.goal_file):
            _check_rel(f, "goal_file")
        for f in as_list(self.golden_file):
            _check_rel(f, "golden_file")
        for f in as_list(self.unit_test_file):
            _check_rel(f, "unit_test_file")
        for f in self.retrieval_context:
            _check_rel(f, "retrieval_context entry")
        for f in as_list(self.trusted_files):
            _check_rel(f, "trusted_files entry")
        return self

    @property
    def category_normalized(self) -> Category | None:
        """The category mapped onto the paper's nine, or None when the text says nothing."""
        return category_from_text(self.category)

    @property
    def goal_files(self) -> list[str]:
        """goal_file as a list."""
        return as_list(self.goal_file)

    @property
    def goal_functions(self) -> list[str]:
        """goal_function as a list (official files put several names in a list or a comma-separated string)."""
        out: list[str] = []
        for item in as_list(self.goal_function):
            out.extend(p.strip() for p in item.split(",") if p.strip())
        return out

    @property
    def qualnames(self) -> list[str]:
        """The goal functions' qualified names: ``Class.method`` when class_name is set, else the name as given."""
        return [f"{self.class_name}.{n}" if self.class_name and "." not in n else n for n in self.goal_functions]

    @property
    def unit_test_files(self) -> list[str]:
        """unit_test_file as a list."""
        return as_list(self.unit_test_file)


class TaskResources(BaseModel):
    """lmrbench: what a task's container needs beyond the defaults (2 GB, 1 CPU, no GPU). The Docker runner
    applies these; ``--memory``, ``--cpus``, ``--gpus`` and ``--hf-cache`` on the command line win over them."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    memory: str | None = None
    """Memory limit (no swap beyond it), in Docker's notation: "8g", "512m"."""
    cpus: float | None = None
    """CPU cores, e.g. 2 or 0.5."""
    gpus: str | int | None = None
    """GPUs: "all", a count, or device ids such as "0,1" (Docker device requests; needs the NVIDIA toolkit)."""
    hf_cache: bool = False
    """The task loads model weights: mount the Hugging Face cache read-only and run offline."""


class TaskInfo(BaseModel):
    """The whole info.json of one task folder."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, use_attribute_docstrings=True)

    instance_id: int | str
    """The task's number (a string in at least one official file)."""
    paper_name: str = ""
    """The paper's title."""
    folder_name: str = ""
    """The task folder's name, e.g. 1-DPO."""
    paper_url: str = ""
    """Where the paper is published."""
    year: int | str | None = None
    """The paper's year."""
    repo_url: str = ""
    """Where the repository was cloned from."""
    repo_folder_name: str
    """The repository's folder inside the task folder."""
    implementations: list[Implementation]
    """The masked functions of the task."""
    upstream_commit: str | None = None
    """lmrbench: the commit the repository was cloned at."""
    provenance: dict[str, str] | None = None
    """lmrbench: who or what authored the task, with which tool version."""
    resources: TaskResources | None = None
    """lmrbench: memory, CPUs, GPUs and the Hugging Face cache the task's container needs."""

    @model_validator(mode="before")
    @classmethod
    def _keys_in_place(cls, data: Any) -> Any:
        if isinstance(data, dict):
            impls = data.get("implementations")
            first = "implementations[0]" if isinstance(impls, list) and impls else "implementations[...]"
            for key in data:
                if key in IMPLEMENTATION_KEYS:
                    raise ValueError(f"{key!r} is at the top level, where lmrbench does not read it: it belongs in "
                                     f"each entry of implementations (as {first}.{key})")
        return data

    @model_validator(mode="after")
    def _consistent(self) -> TaskInfo:
        _check_rel(self.repo_folder_name, "repo_folder_name")
        if "/" in self.repo_folder_name.strip("/") or self.repo_folder_name in (".", ".."):
            raise ValueError(f"repo_folder_name {self.repo_folder_name!r} must be one folder name")
        seen: set[int] = set()
        for impl in self.implementations:
            if impl.index in seen:
                raise ValueError(f"implementation index {impl.index} appears twice")
            seen.add(impl.index)
            for f in impl.goal_files + impl.unit_test_files:
                _check_rel(f"{self.repo_folder_name}/{f}", "path")
        return self

    def implementation(self, index: int) -> Implementation:
        """The implementation with this index, or LmrError."""
        for impl in self.implementations:
            if impl.index == index:
                return impl
        raise LmrError(f"no implementation with index {index} (have {[i.index for i in self.implementations]})")

    def to_json_dict(self) -> dict[str, Any]:
        """The JSON object to write: official names, only the keys that were set, unknown keys kept."""
        data = self.model_dump(mode="json", by_alias=True, exclude_unset=True)
        for impl, raw in zip(self.implementations, data.get("implementations", []), strict=True):
            if impl._retrieval_key != "retrieval_context" and "retrieval_context" in raw:
                raw[impl._retrieval_key] = raw.pop("retrieval_context")
        return data


TASK_LEVEL_KEYS = frozenset(TaskInfo.model_fields)
"""Keys of info.json's top level that lmrbench reads."""
IMPLEMENTATION_KEYS = frozenset(Implementation.model_fields) | {"retrieval_content"}
"""Keys of each entry of ``implementations`` that lmrbench reads, and that mean nothing at the top level
(``trusted_files`` too: the checker and the grader read it from each implementation only)."""


def _first_error(err: ValidationError) -> str:
    e = err.errors()[0]
    loc = ".".join(str(x) for x in e["loc"])
    msg = e["msg"].removeprefix("Value error, ")
    more = f" (+{err.error_count() - 1} more)" if err.error_count() > 1 else ""
    return f"{loc}: {msg}{more}" if loc else f"{msg}{more}"


def load_task_info(path: Path) -> TaskInfo:
    """Read and validate an info.json (or the info.json of a task folder); LmrError names the file."""
    path = Path(path)
    if path.is_dir():
        path = path / INFO_JSON
    if not path.exists() and not path.is_symlink():
        raise LmrError("no info.json here", path)
    raw = read_capped(path, MAX_INFO_BYTES)
    try:
        data = jsonsafe.loads(raw.decode("utf-8-sig"), where=path)
    except UnicodeDecodeError:
        raise LmrError("not UTF-8", path) from None
    except json.JSONDecodeError as exc:
        raise LmrError(f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", path) from None
    if not isinstance(data, dict):
        raise LmrError("the top level must be a JSON object", path)
    try:
        return TaskInfo.model_validate(data)
    except ValidationError as exc:
        raise LmrError(_first_error(exc), path) from None


def save_task_info(info: TaskInfo, path: Path) -> None:
    """Write info.json atomically (4-space indent like the official files)."""
    path = Path(path)
    if path.is_dir():
        path = path / INFO_JSON
    atomic_write_json(path, info.to_json_dict())
