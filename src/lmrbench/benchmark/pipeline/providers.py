"""Chat requests through litellm, so one ``--model`` spelling reaches any provider it knows.

``anthropic/...``, ``gemini/...``, ``bedrock/...`` go to that provider (its own URL unless a base URL is given,
its own key variable unless another is named); ``openai/...`` and a model without a known provider prefix
(``Qwen/Qwen2.5-7B`` behind vLLM) go to the OpenAI-compatible base URL. litellm is an optional dependency
(the ``agents`` extra) and slow to import: it is imported here, lazily, with its price table read from the
copy it ships (no download). litellm never retries here: its errors are sorted into the client's transient
kinds (connection errors, read timeouts, 429, 5xx), retried by ``LLMClient``, and final ones (a 4xx, a refused
key, a reply that is not a completion).
"""

from __future__ import annotations

import ast
import importlib.util
import os
from functools import cache
from pathlib import Path
from typing import Any

import httpx

from lmrbench.benchmark.pipeline.llm_types import LLMConfig, LLMError, LLMReply, Message, Transient, retry_after
from lmrbench.errors import LmrError
from lmrbench.pyparse import parse
from lmrbench.schemas.run import LLMParams, Usage

OPENAI_COMPATIBLE = "openai"
INSTALL_HINT = "pip install 'lmrbench[agents]'"


def available() -> bool:
    """Whether litellm is installed."""
    return importlib.util.find_spec("litellm") is not None


@cache
def _litellm() -> Any:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # read the shipped price table, never fetch one
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


@cache
def known_providers() -> frozenset[str]:
    """The provider prefixes the installed litellm knows (its ``LlmProviders`` enum), read from its source file
    rather than imported: importing litellm costs about 8 s of CPU, and a spelling such as ``Qwen/Qwen2.5-7B``
    (a model behind vLLM) must not pay it to learn that it names no provider. Imported only when the file is not
    where litellm keeps it."""
    spec = importlib.util.find_spec("litellm")
    if spec is None:
        return frozenset()
    for folder in spec.submodule_search_locations or []:
        try:
            tree = parse((Path(folder) / "types" / "utils.py").read_text(encoding="utf-8"))  # under the lock
        except (OSError, SyntaxError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == "LlmProviders":
                return frozenset(stmt.value.value for stmt in node.body if isinstance(stmt, ast.Assign)
                                 and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str))
    return frozenset(str(getattr(p, "value", p)) for p in _litellm().provider_list)


def provider_of(model: str) -> str:
    """The provider a model spelling names (``anthropic`` for ``anthropic/claude-...``); ``openai`` for an
    OpenAI-compatible endpoint, which is also what every spelling means where litellm is not installed."""
    return _named_provider(model) or OPENAI_COMPATIBLE


def _named_provider(model: str) -> str | None:
    """The litellm provider a spelling's prefix names (``openai`` included); None for a bare name, an unknown
    prefix, or no litellm."""
    prefix, sep, _ = model.partition("/")
    return prefix if sep and available() and prefix in known_providers() else None


def through_litellm(model: str) -> bool:
    """Whether ``via="auto"`` sends this model's requests through litellm: when it is installed and the spelling
    names one of its providers (``openai/gpt-4o``, ``anthropic/...``). A bare name (``gpt-4o``, or ``Qwen/...``
    behind vLLM) goes to the OpenAI-compatible base URL through the built-in client, which starts in
    milliseconds where litellm's import costs seconds per command."""
    return _named_provider(model) is not None


LITELLM_ONLY = ("anthropic", "gemini", "vertex_ai", "bedrock", "azure", "mistral", "groq", "deepseek", "ollama")
"""Provider prefixes a user may write that only litellm reaches (without it they would go to OpenAI's URL)."""


def base_url_for(model: str, given: str | None) -> str:
    """The base URL to record and use: ``given``; else empty for a provider litellm reaches on its own; else
    $OPENAI_BASE_URL or OpenAI's. LmrError when ``model`` names such a provider and litellm is not installed."""
    if given:
        return given
    if provider_of(model) != OPENAI_COMPATIBLE:
        return ""
    if model.partition("/")[0] in LITELLM_ONLY and not available():
        raise LmrError(f"--model {model} names a provider that lmrbench reaches through litellm: {INSTALL_HINT}, "
                       "or give an OpenAI-compatible --base-url")  # fmt: skip
    return os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"


def endpoint(params: LLMParams) -> str:
    """Where requests go, as error lines name it."""
    if provider_of(params.model) == OPENAI_COMPATIBLE:
        return params.base_url.rstrip("/") + "/chat/completions"
    return params.base_url or f"{provider_of(params.model)}'s endpoint"


def chat(config: LLMConfig, messages: list[Message], key: str, *, max_tokens: int, timeout: float | None) -> LLMReply:
    """One request, no retry: the reply, ``Transient`` for an error worth retrying, ``LLMError`` for the others."""
    litellm = _litellm()
    params = config.params
    provider = provider_of(params.model)
    url = endpoint(params)
    kwargs: dict[str, Any] = {
        "model": params.model,
        "messages": messages,
        "temperature": params.temperature,
        "max_tokens": max_tokens,
        "num_retries": 0,
        "max_retries": 0,
        "timeout": timeout if timeout is not None else httpx.Timeout(config.timeout, connect=config.connect_timeout),
    }
    api_key = os.environ.get(config.api_key_env, "")
    if provider == OPENAI_COMPATIBLE:
        kwargs["custom_llm_provider"] = OPENAI_COMPATIBLE
        kwargs["model"] = params.model.removeprefix("openai/")
        kwargs["api_base"] = params.base_url
        kwargs["api_key"] = api_key or "none"  # local servers take no key; the SDK insists on one
    else:
        if params.base_url:
            kwargs["api_base"] = params.base_url
        if api_key and config.api_key_env != "OPENAI_API_KEY":
            kwargs["api_key"] = api_key  # else the provider's own variable (ANTHROPIC_API_KEY, GEMINI_API_KEY)
    try:
        resp = litellm.completion(**kwargs)
    except Exception as exc:  # noqa: BLE001 - litellm raises its own tree; every error is sorted below
        raise _sorted(exc, config, url, timeout) from None
    try:
        choice = resp.choices[0]
        text = choice.message.content
        if not isinstance(text, str):
            raise TypeError("content is not text")
    except (IndexError, AttributeError, TypeError) as exc:
        raise LLMError("malformed", f"reply is not a chat completion ({type(exc).__name__}: {exc})", url) from None
    usage = getattr(resp, "usage", None)
    return LLMReply(
        text=text,
        usage=Usage(
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            calls=1,
        ),
        cache_key=key,
        finish_reason=str(choice.finish_reason or ""),
        model=str(resp.model or ""),
    )


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    at: BaseException | None = exc
    while at is not None and len(out) < 12:
        out.append(at)
        at = at.__cause__ or at.__context__
    return out


def _sorted(exc: Exception, config: LLMConfig, url: str, timeout: float | None) -> Exception:
    """litellm's exception as ``Transient`` or ``LLMError``; a missing provider package is an ``LmrError``."""
    chain = _chain(exc)
    status = getattr(exc, "status_code", None)
    names = {type(e).__name__ for e in chain}
    first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
    if any(isinstance(e, httpx.ConnectTimeout) for e in chain):
        return Transient("connect", "connection timed out", url=url)
    if any(isinstance(e, httpx.TimeoutException) for e in chain) or "Timeout" in names or "APITimeoutError" in names:
        waited = config.timeout if timeout is None else timeout
        return Transient("timeout", f"no reply within {waited:g} s", url=url)
    if any(isinstance(e, httpx.ConnectError | ConnectionError) for e in chain):
        return Transient("connect", f"cannot connect: {first}", url=url)
    if any(isinstance(e, ValueError | KeyError) for e in chain):
        return LLMError("malformed", f"reply is not a chat completion: {first}", url)
    if isinstance(exc, ImportError):
        return LmrError(f"the model {config.params.model} needs a package litellm did not find: {exc}")
    if status == 429:
        return Transient("rate_limit", "HTTP 429 rate limited", _retry_after_of(exc), url)
    if isinstance(status, int) and status >= 500:
        return Transient("server", f"HTTP {status}: {first}", _retry_after_of(exc), url)
    if status in (401, 403):
        return LLMError("auth", f"HTTP {status}: check ${config.api_key_env} (or the provider's key variable)", url)
    if isinstance(status, int) and status >= 400:
        return LLMError("client", f"HTTP {status}: {first}", url)
    return Transient("connect", f"{type(exc).__name__}: {first}", url=url)


def _retry_after_of(exc: Exception) -> float | None:
    """Retry-After from the reply's headers, wherever litellm keeps them."""
    response = getattr(exc, "response", None)
    for headers in (getattr(exc, "litellm_response_headers", None), getattr(response, "headers", None)):
        if headers is not None:
            wait = retry_after(headers)
            if wait is not None:
                return wait
    return None


__all__ = ["INSTALL_HINT", "available", "base_url_for", "chat", "endpoint", "provider_of"]
