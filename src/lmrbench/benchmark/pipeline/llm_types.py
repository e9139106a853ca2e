"""The types the model client and its providers share: settings, replies, errors, the Retry-After reader."""

from __future__ import annotations

import email.utils
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from lmrbench.defaults import cache_root
from lmrbench.errors import LmrError
from lmrbench.schemas.run import LLMParams, Usage

ErrorKind = Literal["connect", "timeout", "rate_limit", "server", "client", "malformed", "auth"]
Message = dict[str, str]
DEFAULT_CACHE = cache_root() / "llm"


class LLMError(LmrError):
    """A failed request; ``kind`` is one of connect, timeout, rate_limit, server, client, malformed, auth."""

    def __init__(self, kind: ErrorKind, problem: str, url: str | None = None) -> None:
        self.kind = kind
        super().__init__(f"{kind}: {problem}", url)


@dataclass(frozen=True)
class LLMConfig:
    """How to reach an endpoint and how patient to be with it."""

    params: LLMParams
    api_key_env: str = "OPENAI_API_KEY"
    """Environment variable holding the key (unset: no Authorization header, fine for local servers)."""
    timeout: float = 120.0
    """Seconds to wait for a reply (read timeout)."""
    connect_timeout: float = 10.0
    """Seconds to wait for a connection."""
    max_retries: int = 4
    """Retries after a transient error (so at most max_retries + 1 requests)."""
    backoff: float = 1.0
    """First backoff in seconds, doubled at each retry."""
    max_backoff: float = 60.0
    """Cap on any single wait, Retry-After included."""
    concurrency: int = 4
    """Requests in flight at once, across threads."""
    cache_dir: Path | None = DEFAULT_CACHE
    """Where replies are cached; None disables the cache."""
    cache_salt: str = ""
    """Mixed into every cache key when set: one repeated sample's replies are never another's."""
    via: Literal["auto", "litellm", "http"] = "auto"
    """auto: through litellm where installed and the model is spelled with one of its providers
    (``openai/...``, ``anthropic/...``), else the built-in client; litellm: always through litellm; http: the
    built-in client (OpenAI-compatible endpoints only)."""


@dataclass
class LLMReply:
    """A reply: its text, the tokens it cost and whether it came from the cache."""

    text: str
    usage: Usage
    cache_key: str
    finish_reason: str = ""
    model: str = ""
    cached: bool = False
    attempts: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def retry_after(headers: Any) -> float | None:
    """Seconds a reply's ``Retry-After`` header asks to wait (seconds or an HTTP date); None when absent."""
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class Transient(Exception):
    def __init__(
        self, kind: ErrorKind, problem: str, retry_after: float | None = None, url: str | None = None
    ) -> None:
        super().__init__(problem)
        self.kind = kind
        self.problem = problem
        self.retry_after = retry_after
        self.url = url
