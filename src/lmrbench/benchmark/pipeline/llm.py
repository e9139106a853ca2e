"""A chat client for any provider: transient-error retries, a disk cache, a concurrency cap.

Requests go through litellm where it is installed (the ``agents`` extra; see ``providers``), so ``--model
anthropic/...``, ``gemini/...``, ``openai/...`` or any model behind an OpenAI-compatible base URL work alike;
without it, through a built-in HTTP client for OpenAI-compatible endpoints only.

Transient errors (connection failures, read timeouts, HTTP 429 and 5xx) are retried with exponential backoff,
honouring ``Retry-After``; anything else (a 4xx, a malformed reply) is an answer: it fails at once with an
:class:`LLMError` whose ``kind`` says what went wrong. ``preflight`` asks once, within seconds, whether the endpoint
answers at all, before a stage spends minutes on it.
Replies are cached on disk under a sha256 of the model, the messages and the sampling parameters (not the base
URL, so the same model behind another address hits the same entries); errors are never cached. With a
temperature above 0 a cached reply is one sample, reused: pass ``--no-cache`` to draw new ones.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx

from lmrbench import jsonsafe
from lmrbench.benchmark.pipeline.llm_types import (  # noqa: F401 - the client's types, imported from here too
    DEFAULT_CACHE,
    ErrorKind,
    LLMConfig,
    LLMError,
    LLMReply,
    Message,
    Transient,
    retry_after,
)
from lmrbench.errors import NotRun
from lmrbench.fsutil import atomic_write_json
from lmrbench.schemas.run import LLMParams, Usage

T = TypeVar("T")

PREFLIGHT_SECONDS = 10.0
"""How long ``LLMClient.preflight`` tries before it says the endpoint does not answer."""


def cache_key(params: LLMParams, messages: list[Message], salt: str = "") -> str:
    """sha256 of everything that determines a reply: model, sampling parameters and messages (and ``salt``,
    the repeated sample it is for, when not empty)."""
    body: dict[str, Any] = {
        "model": params.model,
        "temperature": params.temperature,
        "max_tokens": params.max_tokens,
        "messages": messages,
    }
    if salt:
        body["salt"] = salt
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class LLMClient:
    """Thread-safe chat client. Use as a context manager or call :meth:`close`."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.params = config.params
        self._gate = threading.BoundedSemaphore(max(1, config.concurrency))
        self._lock = threading.Lock()
        self.usage = Usage()
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(config.api_key_env, "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self._http = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(config.timeout, connect=config.connect_timeout),
            limits=httpx.Limits(max_connections=max(1, config.concurrency)),
        )
        from lmrbench.benchmark.pipeline import providers  # it imports this module's errors

        self._litellm = config.via == "litellm" or (config.via == "auto" and providers.through_litellm(
            config.params.model))
        self.url = (
            providers.endpoint(config.params)
            if self._litellm
            else config.params.base_url.rstrip("/") + "/chat/completions"
        )

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP connections."""
        self._http.close()

    # -- cache ---------------------------------------------------------------------------------------------
    def _cache_path(self, key: str) -> Path | None:
        if self.config.cache_dir is None:
            return None
        return Path(self.config.cache_dir) / key[:2] / f"{key}.json"

    def _cache_get(self, key: str) -> LLMReply | None:
        path = self._cache_path(key)
        if path is None or not path.is_file():
            return None
        try:
            data = jsonsafe.loads(path.read_text("utf-8"), where=path)
            usage = Usage(
                prompt_tokens=data.get("prompt_tokens", 0),
                completion_tokens=data.get("completion_tokens", 0),
                calls=0,
                cached=1,
            )
            return LLMReply(
                text=data["text"],
                usage=usage,
                cache_key=key,
                cached=True,
                finish_reason=data.get("finish_reason", ""),
                model=data.get("model", ""),
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None  # an unreadable entry is a miss; it is overwritten on success

    def _cache_put(self, reply: LLMReply) -> None:
        path = self._cache_path(reply.cache_key)
        if path is None:
            return
        atomic_write_json(
            path,
            {
                "text": reply.text,
                "prompt_tokens": reply.usage.prompt_tokens,
                "completion_tokens": reply.usage.completion_tokens,
                "finish_reason": reply.finish_reason,
                "model": reply.model,
            },
        )

    def evict(self, reply: LLMReply) -> None:
        """Forget a cached reply (e.g. one that failed validation), so that a re-run asks again."""
        path = self._cache_path(reply.cache_key)
        if path is not None:
            path.unlink(missing_ok=True)

    # -- requests ------------------------------------------------------------------------------------------
    def complete(self, messages: list[Message], *, use_cache: bool = True) -> LLMReply:
        """Send a chat completion and return the first choice's text; LLMError when it cannot."""
        key = cache_key(self.params, messages, self.config.cache_salt)
        if use_cache:
            hit = self._cache_get(key)
            if hit is not None:
                self._count(hit.usage)
                return hit
        reply, attempts = self._retrying(lambda: self._chat(messages, key, self.params.max_tokens))
        reply.attempts = attempts
        self._count(reply.usage)
        if use_cache:
            self._cache_put(reply)
        return reply

    def post_json(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``<base url><path>`` with the same retries, limits and errors; the reply's JSON object.

        For endpoints other than chat completions (e.g. ``/completions``); replies are not cached.
        """
        url = self.params.base_url.rstrip("/") + path
        resp, _ = self._retrying(lambda: self._send(url, body))
        try:
            data = resp.json()
        except ValueError:
            raise LLMError("malformed", f"reply is not JSON: {resp.text[:200]!r}", url) from None
        if not isinstance(data, dict):
            raise LLMError("malformed", "reply is not a JSON object", url)
        return data

    def preflight(self, budget: float = PREFLIGHT_SECONDS) -> None:
        """One tiny request, retried while ``budget`` seconds last: LmrError naming the URL when nothing answers
        (no connection, no reply in time, 5xx throughout) or the key is refused. Any other answer, a 4xx
        included, means the endpoint is there."""
        ping = [{"role": "user", "content": "Reply with OK."}]
        deadline = time.monotonic() + budget
        attempt = 0
        while True:
            attempt += 1
            left = deadline - time.monotonic()
            try:
                with self._gate:
                    self._chat(ping, "", 1, timeout=max(0.5, left))
                return
            except LLMError as exc:
                if exc.kind != "auth":
                    return
                raise NotRun(f"the model endpoint {self.url} refused the key: {exc}") from None
            except Transient as exc:
                wait = self._wait(attempt, exc)
                if time.monotonic() + wait >= deadline:
                    raise NotRun(f"the model endpoint {self.url} does not answer: {exc.problem} "
                                   f"({attempt} attempts in {budget:g} s)") from None  # fmt: skip
                time.sleep(wait)

    def _chat(self, messages: list[Message], key: str, max_tokens: int, timeout: float | None = None) -> LLMReply:
        """One chat request, through litellm or the built-in client; Transient or LLMError when it fails."""
        if self._litellm:
            from lmrbench.benchmark.pipeline import providers

            return providers.chat(self.config, messages, key, max_tokens=max_tokens, timeout=timeout)
        body = {
            "model": self.params.model.removeprefix("openai/"),
            "messages": messages,
            "temperature": self.params.temperature,
            "max_tokens": max_tokens,
        }
        return _parse_completion(self._send(self.url, body, timeout=timeout), key, self.url)

    def _retrying(self, call: Callable[[], T]) -> tuple[T, int]:
        """``call()`` under the concurrency gate, retried after transient errors; (result, attempts)."""
        attempt = 0
        while True:
            attempt += 1
            try:
                with self._gate:
                    return call(), attempt
            except Transient as exc:
                if attempt > self.config.max_retries:
                    raise LLMError(exc.kind, f"{exc.problem} (after {attempt} attempts)", exc.url) from None
                time.sleep(self._wait(attempt, exc))

    def _wait(self, attempt: int, exc: Transient) -> float:
        """Seconds before the next attempt: the backoff doubled at each, or Retry-After when longer; capped."""
        wait = self.config.backoff * (2 ** (attempt - 1))
        if exc.retry_after is not None:
            wait = max(wait, exc.retry_after)
        return min(wait, self.config.max_backoff)

    def _count(self, usage: Usage) -> None:
        with self._lock:
            self.usage = self.usage.add(usage)

    def _send(self, url: str, body: dict[str, Any], timeout: float | None = None) -> httpx.Response:
        """One POST (``timeout``: seconds for the whole request instead of the configured read timeout);
        Transient for errors worth retrying, LLMError for the others."""
        limit = httpx.Timeout(timeout) if timeout is not None else httpx.USE_CLIENT_DEFAULT
        try:
            resp = self._http.post(url, json=body, timeout=limit)
        except httpx.ConnectError as exc:
            raise Transient("connect", f"cannot connect: {exc}", url=url) from None
        except httpx.ConnectTimeout:
            raise Transient("connect", "connection timed out", url=url) from None
        except httpx.PoolTimeout:
            raise Transient("connect", "no free connection", url=url) from None
        except httpx.TimeoutException:
            waited = self.config.timeout if timeout is None else timeout
            raise Transient("timeout", f"no reply within {waited:g} s", url=url) from None
        except httpx.HTTPError as exc:
            raise Transient("connect", f"{type(exc).__name__}: {exc}", url=url) from None
        if resp.status_code == 429:
            raise Transient("rate_limit", "HTTP 429 rate limited", retry_after(resp.headers), url)
        if resp.status_code >= 500:
            raise Transient("server", f"HTTP {resp.status_code}: {resp.text[:200]}", retry_after(resp.headers), url)
        if resp.status_code in (401, 403):
            raise LLMError("auth", f"HTTP {resp.status_code}: check ${self.config.api_key_env}", url)
        if resp.status_code >= 400:
            raise LLMError("client", f"HTTP {resp.status_code}: {resp.text[:200]}", url)
        return resp


def _parse_completion(resp: httpx.Response, key: str, url: str) -> LLMReply:
    try:
        data = jsonsafe.loads(resp.content)
        choice = data["choices"][0]
        text = choice["message"]["content"]
        if not isinstance(text, str):
            raise TypeError("content is not text")
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise LLMError(
            "malformed", f"reply is not a chat completion ({type(exc).__name__}: {exc})", url
        ) from None
    raw_usage = data.get("usage") or {}
    usage = Usage(
        prompt_tokens=int(raw_usage.get("prompt_tokens") or 0),
        completion_tokens=int(raw_usage.get("completion_tokens") or 0),
        calls=1,
    )
    return LLMReply(
        text=text,
        usage=usage,
        cache_key=key,
        finish_reason=str(choice.get("finish_reason") or ""),
        model=str(data.get("model") or ""),
    )
