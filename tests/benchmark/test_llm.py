"""The chat client against a real HTTP server on 127.0.0.1: every test runs once through litellm and once through
the built-in OpenAI-compatible client (what a default install without litellm uses)."""

from __future__ import annotations

import sys
import threading
from functools import partial
from pathlib import Path

import pytest

from helpers.llm_server import LLMServer, malformed, status
from lmrbench.benchmark.pipeline import llm, providers
from lmrbench.benchmark.pipeline.llm import LLMClient, LLMError
from lmrbench.errors import LmrError
from lmrbench.schemas.run import LLMParams

pytestmark = pytest.mark.xdist_group("litellm")  # litellm's import (8 s of CPU) paid by one worker


@pytest.fixture(autouse=True, params=["litellm", "http"])
def via(request, monkeypatch) -> str:
    """Runs the test through litellm, then through the built-in client."""
    if request.param == "litellm":
        assert providers.available(), "litellm is part of the dev install"
    via = "litellm" if request.param == "litellm" else "http"
    monkeypatch.setattr(sys.modules[__name__], "LLMConfig", partial(llm.LLMConfig, via=via))
    return str(request.param)


LLMConfig = llm.LLMConfig


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


def test_slow_reply_times_out_after_its_retries(server) -> None:
    from helpers.llm_server import reply

    server.on("q", reply("late", delay=1.5))
    with make_client(server, None, timeout=0.3, max_retries=1) as client, pytest.raises(LLMError) as err:
        client.complete(ask("q"))
    assert err.value.kind == "timeout" and "after 2 attempts" in str(err.value)
    assert len(server.requests) == 2


def test_a_read_timeout_is_tried_again(server) -> None:
    from helpers.llm_server import reply

    server.on("q", reply("late", delay=1.5), "in time")
    with make_client(server, None, timeout=0.3) as client:
        out = client.complete(ask("q"))
    assert out.text == "in time" and out.attempts == 2


def _dead_url() -> str:
    """The address of a port nothing listens on (bound, then closed)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_preflight_names_the_url_of_an_endpoint_that_does_not_answer(server) -> None:
    from helpers.llm_server import reply

    dead = LLMClient(LLMConfig(LLMParams(model="m", base_url=_dead_url()), backoff=0.01, cache_dir=None))
    with dead, pytest.raises(LmrError) as err:
        dead.preflight(budget=1.0)
    assert f"the model endpoint {dead.url} does not answer: cannot connect" in str(err.value)
    assert "\n" not in str(err.value)
    server.default = reply("", delay=5)  # accepts the connection, never replies in time
    with make_client(server, None) as silent, pytest.raises(LmrError) as err:
        silent.preflight(budget=1.0)
    assert "does not answer: no reply within" in str(err.value) and silent.url in str(err.value)


def test_preflight_takes_any_answer_but_a_refused_key(server) -> None:
    server.default = status(404)  # an unknown model is an answer: the tasks say so, one by one
    with make_client(server, None) as client:
        client.preflight()
    assert server.requests[-1].body["max_tokens"] == 1
    server.default = None
    server.on("Reply with OK.", status(503), status(429, retry_after="0.1"), "OK")
    with make_client(server, None) as client:
        client.preflight()
    assert [r.body["messages"] for r in server.requests].count(ask("Reply with OK.")) == 4  # the 404, then three
    server.on("Reply with OK.", status(401))
    with make_client(server, None) as client, pytest.raises(LmrError, match="refused the key"):
        client.preflight()


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


def test_openai_prefix_names_the_protocol_not_the_model(server) -> None:
    server.on("q", "fine")
    params = LLMParams(model="openai/served-model", base_url=server.base_url, max_tokens=8)
    with LLMClient(LLMConfig(params=params, cache_dir=None)) as client:
        assert client.complete(ask("q")).text == "fine"
    assert server.requests[-1].body["model"] == "served-model" and server.requests[-1].path == "/v1/chat/completions"
