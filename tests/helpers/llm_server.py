"""A small OpenAI-compatible server on 127.0.0.1 that tests start and script (test support, not product).

It answers ``/v1/chat/completions`` and ``/v1/completions`` (the latter with ``echo`` and per-token
``logprobs`` when a step scripts them, as vLLM does), and Anthropic's ``/v1/messages`` with the same
script. A script is a list of rules; the first rule whose
``match`` text occurs in the request's messages (or prompt) answers.
A rule holds a sequence of steps used one per request, the last one repeating: a reply text, an HTTP
status (with an optional Retry-After), a malformed body, each with an optional delay. Requests are recorded.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Step:
    """One scripted answer."""

    reply: str | None = None
    finish_reason: str = "stop"
    status: int = 200
    body: str | None = None
    retry_after: str | None = None
    delay: float = 0.0
    prompt_logprobs: list[tuple[str, float | None]] | None = None
    """For /v1/completions: the prompt's tokens and their logprobs (echoed, followed by one generated token)."""
    generated_only: bool = False
    """For /v1/completions: logprobs of the generated token only, none for the prompt (what an endpoint
    without echo support returns)."""


def reply(text: str, delay: float = 0.0, finish_reason: str = "stop") -> Step:
    """A normal completion whose content is ``text``."""
    return Step(reply=text, delay=delay, finish_reason=finish_reason)


def logprobs(tokens: list[tuple[str, float | None]], *, generated_only: bool = False) -> Step:
    """A /v1/completions answer whose prompt tokens have these logprobs (the first is usually None)."""
    return Step(reply=" x", prompt_logprobs=tokens, generated_only=generated_only)


def status(code: int, retry_after: str | None = None) -> Step:
    """An HTTP error status."""
    return Step(
        status=code, body=json.dumps({"error": {"message": f"scripted {code}"}}), retry_after=retry_after
    )


def malformed(body: str = "{not json") -> Step:
    """A 200 whose body is not a chat completion."""
    return Step(body=body)


@dataclass
class Rule:
    match: str
    steps: list[Step]
    used: int = 0


@dataclass
class Request:
    """A request as received."""

    body: dict[str, Any]
    headers: Mapping[str, str]
    """The request's headers (looked up without regard to case)."""
    time: float
    path: str = "/v1/chat/completions"

    @property
    def text(self) -> str:
        """All message contents (or the completion prompt) joined."""
        prompt = self.body.get("prompt")
        if isinstance(prompt, str):
            return prompt
        messages = list(self.body.get("messages", []))
        if self.body.get("system"):
            messages.insert(0, {"content": self.body["system"]})
        return "\n".join(_text(m.get("content", "")) for m in messages)


def _text(content: Any) -> str:
    """A message's content as text: a string, or the text of its blocks (Anthropic's form)."""
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))


@dataclass
class LLMServer:
    """The running server; ``base_url`` ends in /v1."""

    rules: list[Rule] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    default: Step | None = None
    in_flight: int = 0
    peak_in_flight: int = 0
    """Most requests being answered at the same moment."""

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                path = self.path.rstrip("/")
                if path not in ("/v1/chat/completions", "/v1/completions", "/v1/messages"):
                    self._send(404, "{}")
                    return
                body = json.loads(raw)
                step = server._answer(Request(body, self.headers, time.time(), path))
                self._in_flight = True
                try:
                    if path == "/v1/completions":
                        self._text_reply(step, body)
                    elif path == "/v1/messages":
                        self._messages_reply(step, body)
                    else:
                        self._reply(step, body)
                finally:
                    self._release()

            def _release(self) -> None:
                """The request is answered: no longer in flight (before the reply leaves, since the client may
                send its next request as soon as it has read this one)."""
                if getattr(self, "_in_flight", False):
                    self._in_flight = False
                    with server._lock:
                        server.in_flight -= 1

            def _reply(self, step: Step, body: dict[str, Any]) -> None:
                if step.delay:
                    time.sleep(step.delay)
                if step.body is not None:
                    self._send(step.status, step.body, step.retry_after)
                    return
                content = step.reply or ""
                prompt = sum(len(m.get("content", "").split()) for m in body.get("messages", []))
                payload = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion",
                    "model": body.get("model", ""),
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": step.finish_reason,
                            "message": {"role": "assistant", "content": content},
                        }
                    ],
                    "usage": {
                        "prompt_tokens": prompt,
                        "completion_tokens": len(content.split()),
                        "total_tokens": prompt + len(content.split()),
                    },
                }
                self._send(200, json.dumps(payload))

            def _messages_reply(self, step: Step, body: dict[str, Any]) -> None:
                """Anthropic's messages protocol: content blocks, stop_reason, input/output tokens."""
                if step.delay:
                    time.sleep(step.delay)
                if step.body is not None:
                    self._send(step.status, step.body, step.retry_after)
                    return
                content = step.reply or ""
                prompt = len(Request(body, {}, 0.0).text.split())
                stop = {"stop": "end_turn", "length": "max_tokens"}.get(step.finish_reason, step.finish_reason)
                payload = {
                    "id": "msg_test", "type": "message", "role": "assistant", "model": body.get("model", ""),
                    "content": [{"type": "text", "text": content}], "stop_reason": stop, "stop_sequence": None,
                    "usage": {"input_tokens": prompt, "output_tokens": len(content.split())},
                }  # fmt: skip
                self._send(200, json.dumps(payload))

            def _text_reply(self, step: Step, body: dict[str, Any]) -> None:
                if step.delay:
                    time.sleep(step.delay)
                if step.body is not None:
                    self._send(step.status, step.body, step.retry_after)
                    return
                prompt = str(body.get("prompt", ""))
                gen = step.reply or ""
                tokens = step.prompt_logprobs or [(w, None) for w in prompt.split()]
                logprobs: dict[str, Any] | None = None
                if step.prompt_logprobs is not None and body.get("logprobs") is not None:
                    shown = [] if step.generated_only or not body.get("echo") else tokens
                    offsets, at = [], 0
                    for tok, _ in shown:
                        offsets.append(at)
                        at += len(tok)
                    logprobs = {
                        "tokens": [t for t, _ in shown] + [gen],
                        "token_logprobs": [lp for _, lp in shown] + [-0.5],
                        "top_logprobs": [None if lp is None else {t: lp} for t, lp in shown] + [{gen: -0.5}],
                        "text_offset": offsets + [at],
                    }
                payload = {
                    "id": "cmpl-test",
                    "object": "text_completion",
                    "model": body.get("model", ""),
                    "choices": [{"index": 0, "text": (prompt if body.get("echo") else "") + gen,
                                 "finish_reason": "length", "logprobs": logprobs}],
                    "usage": {"prompt_tokens": len(tokens), "completion_tokens": 1, "total_tokens": len(tokens) + 1},
                }  # fmt: skip
                self._send(200, json.dumps(payload))

            def _send(self, code: int, text: str, retry_after: str | None = None) -> None:
                data = text.encode()
                self._release()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    if retry_after is not None:
                        self.send_header("Retry-After", retry_after)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        """http://127.0.0.1:<port>/v1"""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def on(self, match: str, *steps: Step | str) -> None:
        """Answer requests containing ``match`` with ``steps`` in turn (strings are replies); newest first."""
        with self._lock:
            self.rules.insert(0, Rule(match, [reply(s) if isinstance(s, str) else s for s in steps]))

    def _answer(self, req: Request) -> Step:
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            self.requests.append(req)
            text = req.text
            for rule in self.rules:
                if rule.match in text:
                    step = rule.steps[min(rule.used, len(rule.steps) - 1)]
                    rule.used += 1
                    return step
        return self.default or status(404)

    def matching(self, match: str) -> list[Request]:
        """Requests received whose messages contain ``match``."""
        with self._lock:
            return [r for r in self.requests if match in r.text]

    def close(self) -> None:
        """Stop serving."""
        self._httpd.shutdown()
        self._httpd.server_close()

