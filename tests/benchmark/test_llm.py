"""The OpenAI-compatible client against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from helpers.llm_server import LLMServer, malformed, status
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMConfig, LLMError
from lmrbench.schemas.run import LLMParams


def make_client(server: LLMServer, tmp_path: Path | None, **kw: object) -> LLMClient:
    params = LLMParams(model="m1", base_url=server.base_url, temperature=0.0, max_tokens=64)
    cfg = dict(backoff=0.01, max_backoff=0.5, cache_dir=(tmp_path / "cache") if tmp_path else None)
    cfg.update(kw)
    return LLMClient(LLMConfig(params=params, **cfg))  # type: ignore[arg-type]


def ask(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_reply_tokens_and_key_from_environment(server, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("MY_KEY", "sekret")
    server.on("hello", "world reply")
    with make_client(server, tmp_path, api_key_env="MY_KEY") as client:
        out = client.complete(ask("hello there"))
    assert out.text == "world reply"
    assert out.usage.prompt_tokens == 2 and out.usage.completion_tokens == 2 and out.usage.calls == 1
    req = server.requests[0]
    assert req.headers["Authorization"] == "Bearer sekret"
    assert req.body["model"] == "m1" and req.body["max_tokens"] == 64 and req.body["temperature"] == 0.0


def test_cache_serves_second_call_and_evict_forgets(server, tmp_path) -> None:
    server.on("q", "first", "second")
    with make_client(server, tmp_path) as client:
        a = client.complete(ask("q"))
        b = client.complete(ask("q"))
        assert (a.text, b.text) == ("first", "first") and b.cached and b.usage.calls == 0
        assert len(server.requests) == 1
        client.evict(b)
        c = client.complete(ask("q"))
    assert c.text == "second" and not c.cached
    assert client.usage.calls == 2 and client.usage.cached == 1


def test_cache_key_changes_with_parameters(server, tmp_path) -> None:
    server.on("q", "a", "b")
    with make_client(server, tmp_path) as c1:
        c1.complete(ask("q"))
    params = LLMParams(model="m1", base_url=server.base_url, temperature=0.7, max_tokens=64)
    with LLMClient(LLMConfig(params=params, cache_dir=tmp_path / "cache")) as c2:
        assert c2.complete(ask("q")).text == "b"


def test_retries_429_and_5xx_honouring_retry_after(server, tmp_path) -> None:
    server.on("q", status(429, retry_after="0.3"), status(500), status(503), "finally")
    with make_client(server, tmp_path) as client:
        out = client.complete(ask("q"))
    assert out.text == "finally" and out.attempts == 4
    times = [r.time for r in server.requests]
    assert times[1] - times[0] >= 0.3  # Retry-After waited for, though the backoff is 0.01 s


def test_gives_up_after_max_retries_and_caches_nothing(server, tmp_path) -> None:
    server.on("q", status(502))
    with make_client(server, tmp_path, max_retries=2) as client, pytest.raises(LLMError) as err:
        client.complete(ask("q"))
    assert err.value.kind == "server" and "after 3 attempts" in str(err.value)
    assert len(server.requests) == 3
    assert not list((tmp_path / "cache").rglob("*.json"))


def test_client_errors_and_malformed_replies_are_not_retried(server, tmp_path) -> None:
    server.on("bad", status(400))
    server.on("junk", malformed())
    server.on("shape", malformed('{"choices": []}'))
    with make_client(server, tmp_path) as client:
        for prompt, kind in [("bad", "client"), ("junk", "malformed"), ("shape", "malformed")]:
            with pytest.raises(LLMError) as err:
                client.complete(ask(prompt))
            assert err.value.kind == kind
    assert len(server.requests) == 3


def test_endpoint_down_is_a_connect_error(tmp_path) -> None:
    params = LLMParams(model="m", base_url="http://127.0.0.1:9/v1")
    cfg = LLMConfig(params=params, max_retries=1, backoff=0.01, cache_dir=None)
    with LLMClient(cfg) as client, pytest.raises(LLMError) as err:
        client.complete(ask("q"))
    assert err.value.kind == "connect"


def test_slow_reply_times_out(server) -> None:
    from helpers.llm_server import reply

    server.on("q", reply("late", delay=1.5))
    with make_client(server, None, timeout=0.3) as client, pytest.raises(LLMError) as err:
        client.complete(ask("q"))
    assert err.value.kind == "timeout"


def test_concurrency_limit_holds_across_threads(server) -> None:
    from helpers.llm_server import reply

    server.on("q", reply("ok", delay=0.3))
    client = make_client(server, None, concurrency=2)
    threads = [threading.Thread(target=client.complete, args=(ask(f"q{i}"),)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    client.close()
    assert server.peak_in_flight == 2  # six slow replies, never more than two asked at once
    assert client.usage.calls == 6
