"""The stub's HTTP layer: a threading server on 127.0.0.1 that hands each request to its StubServer."""
from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from rubriceval.testing.stub_batches import batch_endpoints
from rubriceval.testing.stub_replies import Reply, error_reply

if TYPE_CHECKING:
    from rubriceval.testing.stub_server import StubServer


# The Batch API routes (rubriceval/testing/stub_batches.py).
BATCH_ROUTES = ("/v1/files", "/v1/batches", "/_stub/batches")


class StubHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 512        # the default backlog of 5 drops connections when 64 clients start at once

    def __init__(self, address: tuple[str, int], handler: type, stub: StubServer):
        self.stub = stub
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, handler)

    def track(self, connection: socket.socket, open_: bool) -> None:
        with self._connections_lock:
            (self._connections.add if open_ else self._connections.discard)(connection)

    def close_open_connections(self) -> None:
        """Keep-alive handler threads would otherwise wait for the next request on a dead server."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class StubHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"     # keep-alive, like real providers; every reply sets Content-Length
    timeout = 120                     # idle keep-alive connections end eventually
    disable_nagle_algorithm = True    # headers and body go out as separate writes; Nagle would add ~40 ms to each
    server: StubHTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 — quiet: tests read stats instead
        pass

    def do_GET(self) -> None:  # noqa: N802
        if self.path.startswith(BATCH_ROUTES):
            self._send(batch_endpoints(self.server.stub).handle("GET", self.path, self.headers, b""))
        elif self.path.startswith("/_stub/"):
            self._send(self.server.stub.handle_admin("GET", self.path, None))
        elif self.path.rstrip("/") == "/v1/models":
            self._send(self.server.stub.handle("models", None, self.headers.get("Authorization")))
        else:
            self._send(error_reply(404, f"no route GET {self.path}"))

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.startswith(BATCH_ROUTES):         # multipart uploads: not JSON
            self._send(batch_endpoints(self.server.stub).handle("POST", self.path, self.headers, raw))
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send(error_reply(400, "request body is not JSON"))
            return
        if not isinstance(body, dict):
            self._send(error_reply(400, "request body must be a JSON object"))
            return
        route = self.path.split("?")[0].rstrip("/")
        stub = self.server.stub
        if route.startswith("/_stub/"):
            self._send(stub.handle_admin("POST", self.path, body))
        elif route == "/v1/chat/completions":
            self._send(stub.handle("chat", body, self.headers.get("Authorization")))
        elif route == "/v1/embeddings":
            self._send(stub.handle("embeddings", body, self.headers.get("Authorization")))
        else:
            self._send(error_reply(404, f"no route POST {self.path}"))

    def _send(self, reply: Reply) -> None:
        try:
            if reply.drop_connection:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.send_response(reply.status)
            self.send_header("Content-Type", f"{reply.content_type}; charset=utf-8")
            self.send_header("Content-Length", str(len(reply.body)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply.body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError):
            # The client gave up (e.g. it timed out during an injected hang): nothing left to answer.
            self.close_connection = True
