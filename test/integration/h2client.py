"""A small blocking HTTP/2 client for the tests, on the `h2` package (hyper-h2, from PyPI:
.ci/run installs it; the tests that need it skip, naming it, where it is missing).

    c = H2Client.plain(port)                 # h2c with prior knowledge
    c = H2Client.tls(port, context)          # ALPN h2 (the context must offer it)
    sid = c.request("GET", "/path", headers=[...], body=None, end_stream=True)
    responses = c.wait(sid, ...)             # -> {sid: H2Response}
    c.events                                 # every h2 event seen, in order

Every socket operation has a timeout, so a test cannot hang on a silent server.
"""

from __future__ import annotations

import socket
import ssl
import time
from dataclasses import dataclass, field

import pytest

h2 = pytest.importorskip("h2", reason="the `h2` package (pip install h2) runs the HTTP/2 tests")
import h2.config  # noqa: E402
import h2.connection  # noqa: E402
import h2.events  # noqa: E402
import h2.settings  # noqa: E402


@dataclass
class H2Response:
    stream_id: int
    status: int = 0
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    trailers: list[tuple[str, str]] = field(default_factory=list)
    ended: bool = False
    reset: int | None = None  # the RST_STREAM error code, if the stream was reset

    def header(self, name: str) -> str | None:
        for k, v in self.headers:
            if k == name:
                return v
        return None

    def names(self) -> list[str]:
        return [k for k, _ in self.headers]


class H2Client:
    def __init__(self, sock: socket.socket, timeout: float = 5.0, window: int | None = None,
                 auto_ack: bool = True):
        self.sock = sock
        self.sock.settimeout(timeout)
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8",
                                           validate_outbound_headers=False,
                                           normalize_outbound_headers=False)
        self.conn = h2.connection.H2Connection(config=config)
        self.conn.initiate_connection()
        if window is not None:
            self.conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window})
        self.auto_ack = auto_ack
        self.responses: dict[int, H2Response] = {}
        self.events: list = []
        self.goaway: h2.events.ConnectionTerminated | None = None
        self.closed = False
        self.flush()

    @classmethod
    def plain(cls, port: int, **kw) -> "H2Client":
        return cls(socket.create_connection(("127.0.0.1", port), timeout=5), **kw)

    @classmethod
    def tls(cls, port: int, context: ssl.SSLContext, server_name=None, **kw) -> "H2Client":
        raw = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock = context.wrap_socket(raw, server_hostname=server_name)
        assert sock.selected_alpn_protocol() == "h2", sock.selected_alpn_protocol()
        return cls(sock, **kw)

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def request(self, method: str, path: str, headers=(), body: bytes | None = None,
                authority: str = "sluice.test", end_stream: bool = True) -> int:
        sid = self.conn.get_next_available_stream_id()
        fields = [(":method", method), (":path", path), (":scheme", "http"),
                  (":authority", authority), *headers]
        self.conn.send_headers(sid, fields, end_stream=end_stream and body is None)
        self.responses[sid] = H2Response(sid)
        if body is not None:
            self.send_body(sid, body, end_stream=end_stream)
        self.flush()
        return sid

    def send_body(self, sid: int, body: bytes, end_stream: bool = True):
        """Sends `body` as the stream's and connection's windows allow, reading meanwhile."""
        view = memoryview(body)
        deadline = time.monotonic() + 10
        while view:
            response = self.responses.get(sid)
            if response is not None and response.reset is not None:
                return  # the server stopped the upload (RST_STREAM): the rest is not sent
            room = min(self.conn.local_flow_control_window(sid), self.conn.max_outbound_frame_size)
            if room <= 0:
                self.flush()
                self.pump_once()
                assert time.monotonic() < deadline, "the server never opened its window"
                continue
            chunk, view = view[:room], view[room:]
            self.conn.send_data(sid, bytes(chunk))
            self.flush()
        if end_stream and self.responses.get(sid, H2Response(sid)).reset is None:
            self.conn.end_stream(sid)
            self.flush()

    def pump_once(self) -> bool:
        """Reads once and handles what came; False when the server closed."""
        try:
            data = self.sock.recv(65536)
        except (ConnectionResetError, ssl.SSLError):
            data = b""
        if not data:
            self.closed = True
            return False
        for event in self.conn.receive_data(data):
            self.events.append(event)
            self.handle(event)
        self.flush()
        return True

    def handle(self, event):
        sid = getattr(event, "stream_id", None)
        response = self.responses.get(sid) if sid else None
        if isinstance(event, h2.events.ResponseReceived) and response:
            response.headers = [(k, v) for k, v in event.headers]
            response.status = int(dict(response.headers)[":status"])
        elif isinstance(event, h2.events.DataReceived):
            if response:
                response.body += event.data
            if self.auto_ack:
                self.conn.acknowledge_received_data(event.flow_controlled_length, sid)
        elif isinstance(event, h2.events.TrailersReceived) and response:
            response.trailers = [(k, v) for k, v in event.headers]
        elif isinstance(event, h2.events.StreamEnded) and response:
            response.ended = True
        elif isinstance(event, h2.events.StreamReset) and response:
            response.reset = event.error_code
            response.ended = True
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.goaway = event

    def wait(self, *sids: int, timeout: float = 10.0) -> dict[int, H2Response]:
        """Reads until every stream in `sids` (all opened ones if none) ended or was reset."""
        wanted = sids or tuple(self.responses)
        deadline = time.monotonic() + timeout
        while not all(self.responses[s].ended for s in wanted):
            assert time.monotonic() < deadline, f"streams not ended in {timeout}s"
            if not self.pump_once():
                break
        return {s: self.responses[s] for s in wanted}

    def get(self, path: str, **kw) -> H2Response:
        sid = self.request("GET", path, **kw)
        return self.wait(sid)[sid]

    def read_until_closed(self, timeout: float = 10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if not self.pump_once():
                    return
            except socket.timeout:
                continue
        raise AssertionError("the server did not close the connection")

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def alpn_context(protocols=("h2", "http/1.1")) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(list(protocols))
    return ctx
