"""A real webhook receiver on loopback: a threaded HTTP server that records every request and
answers what the test tells it to (status, headers, a delay), path by path."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import orjson


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict[str, object]:
        parsed = orjson.loads(self.body)
        assert isinstance(parsed, dict)
        return parsed


@dataclass
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b'{"ok": true}'
    delay_seconds: float = 0.0


class Receiver:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self.answers: dict[str, Answer] = {}
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self.server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def url(self, path: str = "/hook") -> str:
        return self.base_url + path

    def answer(self, path: str, answer: Answer) -> None:
        with self._lock:
            self.answers[path] = answer

    def on(self, path: str) -> list[Received]:
        with self._lock:
            return [item for item in self.received if item.path == path]

    def wait_for(self, path: str, count: int, timeout: float = 10.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                found = [item for item in self.received if item.path == path]
                if len(found) >= count:
                    return found
                remaining = deadline - time.monotonic()
                assert remaining > 0, f"{path}: {len(found)} of {count} requests arrived"
                self._arrived.wait(remaining)

    def _record(self, item: Received) -> Answer:
        with self._arrived:
            self.received.append(item)
            self._arrived.notify_all()
            return self.answers.get(item.path, Answer())


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length)
            headers = {name.lower(): value for name, value in self.headers.items()}
            answer = receiver._record(Received(self.path, headers, body))
            if answer.delay_seconds:
                time.sleep(answer.delay_seconds)
            self.send_response(answer.status)
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        def log_message(self, format: str, *args: object) -> None:
            return

    return Handler


@contextmanager
def running_receiver() -> Iterator[Receiver]:
    receiver = Receiver()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(receiver))
    server.daemon_threads = True
    receiver.server = server
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
