"""An exec's output read whole when the engine sends its first frames together with the upgrade's headers.

The engine starts an exec's command right after writing the HTTP upgrade's headers, so the first frames of a command
that writes at once can reach the client in the same read as the headers. On a loaded machine that happened (a
binary file read back wrong in the Inspect sandbox's conformance checks), but not on demand; here a small server on
a Unix socket answers docker-py's three calls as the engine does and always sends the two together, so the order
that was rare is the only one.
"""

from __future__ import annotations

import json
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from lmrbench.benchmark.agents.container import _exchange

PAYLOAD = bytes(range(256)) * 40 + b"\x00\xff tail"


def frame(stream: int, data: bytes) -> bytes:
    return bytes([stream, 0, 0, 0]) + len(data).to_bytes(4, "big") + data


class EngineLike(socketserver.StreamRequestHandler):
    """Answers exec create, start (upgraded, stdout and stderr frames in the headers' own write) and inspect;
    ``server.stdin`` collects what the client fed."""

    def handle(self) -> None:
        line = self.rfile.readline().decode()
        headers = {}
        while (h := self.rfile.readline()) not in (b"\r\n", b""):
            k, _, v = h.decode().partition(":")
            headers[k.strip().lower()] = v.strip()
        body = self.rfile.read(int(headers.get("content-length", 0)))
        if "/exec/" in line and "/start" in line:
            assert json.loads(body)["Detach"] is False
            head = b"HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
            head += b"Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n"
            self.wfile.write(head + frame(1, PAYLOAD[:3000]) + frame(2, b"warning\n"))
            self.wfile.flush()
            self.server.stdin = self.rfile.read()  # type: ignore[attr-defined]  # until the client's SHUT_WR
            self.wfile.write(frame(1, PAYLOAD[3000:]))
            return
        answer = {"Id": "e1"} if line.startswith("POST") else {"ExitCode": 0, "Running": False}
        data = json.dumps(answer).encode()
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                         + str(len(data)).encode() + b"\r\nConnection: close\r\n\r\n" + data)


@pytest.fixture
def engine_like(tmp_path: Path) -> Iterator[tuple[docker.APIClient, socketserver.UnixStreamServer]]:
    path = tmp_path / "engine.sock"
    server = socketserver.ThreadingUnixStreamServer(str(path), EngineLike)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = docker.APIClient(base_url=f"unix://{path}", version="1.44")
    try:
        yield client, server
    finally:
        client.close()
        server.shutdown()
        server.server_close()


def test_frames_sent_with_the_upgrade_headers_are_not_lost(engine_like) -> None:
    client, server = engine_like
    exec_id = client.exec_create("c1", ["cat"], stdin=True)["Id"]
    stream = client.exec_start(exec_id, socket=True)
    out, err, over = _exchange(stream, b"fed to the command\x00", limit=1 << 20)
    assert out == PAYLOAD and err == b"warning\n" and not over
    assert server.stdin == b"fed to the command\x00"  # type: ignore[attr-defined]


def test_output_over_the_limit_is_cut_and_said(engine_like) -> None:
    client, _ = engine_like
    stream = client.exec_start(client.exec_create("c1", ["cat"], stdin=True)["Id"], socket=True)
    out, _, over = _exchange(stream, b"", limit=1000)
    assert out == PAYLOAD[:1000] and over
