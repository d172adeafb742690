"""Real HTTP/1.1 backend servers for the sluice black-box tests.

Each Backend listens on 127.0.0.1 (port 0 unless told), runs one thread per connection,
parses every request it receives (Content-Length and chunked bodies, keep-alive and
pipelining), records it, and answers with a behaviour chosen by the test:

    echo() fixed() chunked() close_delimited() slow_head() slow_body()
    close_without_response() reset() garbage() raw_response()
    keepalive_then_close_after() upgrade() refuse_upgrade() expect_100() large() route()

What tests read back:
    .address "127.0.0.1:PORT"   .port
    .requests      list[ReceivedRequest] of complete requests, in arrival order
    .connections   connections accepted
    .bytes_received / .raw_streams (every byte received, per connection)
    .bytes_sent    bytes written (all connections)
    .errors        requests the backend could not parse (a proxy bug if non-empty)
    .tunnel_bytes  bytes received inside an upgraded (101) connection
    .stop()

The parser is strict where framing is concerned: a request the proxy forwards with broken
framing shows up in `.errors` rather than being silently accepted.
"""

from __future__ import annotations

import hashlib
import json
import socket
import struct
import threading
import time
from dataclasses import dataclass, field

from headers import HeaderAccess, tokens

HEAD_LIMIT = 1 << 20
ECHO_BODY_INLINE_MAX = 1 << 20  # larger bodies are echoed as length + sha256 only
RECV_POLL = 0.25  # how often blocked reads look at the stop flag


class BackendParseError(Exception):
    pass


class _Closed(Exception):
    """The peer closed (or the backend is stopping) in the middle of a read."""


@dataclass
class ReceivedRequest(HeaderAccess):
    method: str
    target: str
    version: str
    headers: list[tuple[str, str]]
    body: bytes = b""
    trailers: list[tuple[str, str]] = field(default_factory=list)
    framing: str = "none"  # none | length | chunked
    chunk_sizes: list[int] = field(default_factory=list)
    raw: bytes = b""
    conn_index: int = 0
    seq: int = 0  # index of this request on its connection
    received_at: float = 0.0

    def wants_close(self) -> bool:
        conn = self.connection_tokens()
        if "close" in conn:
            return True
        if self.version == "HTTP/1.0":
            return "keep-alive" not in conn
        return False

    def is_upgrade(self) -> bool:
        return self.has_header("upgrade") and "upgrade" in self.connection_tokens()

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]


_TCHAR = set(b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_HEX = set(b"0123456789abcdefABCDEF")

REASONS = {
    100: "Continue", 101: "Switching Protocols", 200: "OK", 201: "Created",
    204: "No Content", 206: "Partial Content", 301: "Moved Permanently", 302: "Found",
    304: "Not Modified", 400: "Bad Request", 404: "Not Found", 418: "I'm a teapot",
    500: "Internal Server Error", 503: "Service Unavailable",
}


def large_body(n: int) -> bytes:
    """The deterministic payload `large(n)` sends: byte i is i % 251 (251 is prime, so
    a misplaced or repeated 64 KiB block changes the content)."""
    block = bytes(range(251)) * ((n // 251) + 1)
    return block[:n]


# ---------------------------------------------------------------------------------------
# One accepted connection


class BackendConn:
    def __init__(self, backend: "Backend", sock: socket.socket, index: int):
        self.backend = backend
        self.sock = sock
        self.index = index
        self.buf = bytearray()
        self.raw = bytearray()  # every byte received on this connection
        self.responses_sent = 0
        self.requests_seen = 0
        self._capture: bytearray | None = None
        self.closed = False

    # -- reading --

    def _recv(self) -> bool:
        """Read once into the buffer; False on EOF. Raises _Closed when stopping."""
        while True:
            if self.backend._stopping.is_set():
                raise _Closed("backend stopping")
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return False
            if not data:
                return False
            self.raw += data
            self.backend._add_received(len(data))
            self.buf += data
            return True

    def _take(self, n: int) -> bytes:
        out = bytes(self.buf[:n])
        del self.buf[:n]
        if self._capture is not None:
            self._capture += out
        return out

    def read_until(self, marker: bytes, limit: int = HEAD_LIMIT) -> bytes:
        start = 0
        while True:
            idx = self.buf.find(marker, start)
            if idx >= 0:
                return self._take(idx + len(marker))
            if len(self.buf) > limit:
                raise BackendParseError(f"no {marker!r} within {limit} bytes")
            start = max(0, len(self.buf) - len(marker) + 1)
            if not self._recv():
                raise _Closed(f"EOF while waiting for {marker!r}")

    def read_exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not self._recv():
                raise _Closed(f"EOF after {len(self.buf)} of {n} body bytes")
        return self._take(n)

    def recv_some(self) -> bytes:
        """Buffered bytes or the next ones to arrive; b"" on EOF."""
        if not self.buf:
            try:
                if not self._recv():
                    return b""
            except _Closed:
                return b""
        return self._take(len(self.buf))

    # -- writing --

    def send(self, data: bytes):
        """Blocking send that waits out backpressure for as long as it lasts (the socket's
        short timeout only serves to notice a stopping backend). Counts bytes as they go,
        so .bytes_sent shows how far a blocked response got."""
        view = memoryview(data)
        while view:
            if self.backend._stopping.is_set():
                raise _Closed("backend stopping")
            try:
                n = self.sock.send(view)
            except socket.timeout:
                continue
            self.backend._add_sent(n)
            view = view[n:]

    def send_head(self, status: int, headers, reason: str | None = None):
        reason = REASONS.get(status, "Whatever") if reason is None else reason
        out = bytearray(f"HTTP/1.1 {status} {reason}\r\n".encode("latin-1"))
        for k, v in headers:
            out += f"{k}: {v}\r\n".encode("latin-1")
        out += b"\r\n"
        self.send(bytes(out))

    def respond(self, req: ReceivedRequest | None, status: int, headers=(), body: bytes = b"",
                reason: str | None = None, auto_length: bool = True):
        """Send a complete response. Adds Content-Length unless framing is given or the
        status has no body; sends no body bytes for HEAD."""
        headers = list(headers)
        names = {k.lower() for k, _ in headers}
        no_body_status = status < 200 or status in (204, 304)
        if (auto_length and not no_body_status and "content-length" not in names
                and "transfer-encoding" not in names):
            headers.append(("Content-Length", str(len(body))))
        head_only = no_body_status or (req is not None and req.method == "HEAD")
        reason = REASONS.get(status, "Whatever") if reason is None else reason
        out = bytearray(f"HTTP/1.1 {status} {reason}\r\n".encode("latin-1"))
        for k, v in headers:
            out += f"{k}: {v}\r\n".encode("latin-1")
        out += b"\r\n"
        if not head_only:
            out += body
        self.send(bytes(out))
        if status >= 200:
            self.responses_sent += 1

    def sleep(self, seconds: float) -> bool:
        """Sleep unless the backend stops first. False if it stopped."""
        return not self.backend._stopping.wait(seconds)

    def close(self):
        if not self.closed:
            self.closed = True
            try:
                self.sock.close()
            except OSError:
                pass

    def reset(self):
        """Close with SO_LINGER 0, so the peer gets a RST instead of a FIN."""
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        self.close()

    # -- request parsing --

    def read_request(self, behaviour: "Behaviour") -> ReceivedRequest | None:
        """Parse one request. None on a clean EOF between requests."""
        while not self.buf:
            if not self._recv():
                return None
        self._capture = bytearray()
        try:
            head = self.read_until(b"\r\n\r\n")
            req = _parse_request_head(head)
            req.conn_index = self.index
            req.seq = self.requests_seen
            behaviour.on_head(self, req)
            self._read_body(req)
            req.raw = bytes(self._capture)
        finally:
            self._capture = None
        req.received_at = time.monotonic()
        self.requests_seen += 1
        return req

    def _read_body(self, req: ReceivedRequest):
        te = req.header_all("transfer-encoding")
        cl = req.header_all("content-length")
        if te:
            if cl:
                raise BackendParseError("request has both Transfer-Encoding and Content-Length")
            codings = [t.strip().lower() for v in te for t in v.split(",") if t.strip()]
            if not codings or codings[-1] != "chunked" or codings.count("chunked") != 1:
                raise BackendParseError(f"unsupported transfer codings {codings!r}")
            req.framing = "chunked"
            req.body = self._read_chunked(req)
        elif cl:
            if len(cl) != 1 or not cl[0].isdigit():
                raise BackendParseError(f"bad Content-Length {cl!r}")
            req.framing = "length"
            req.body = self.read_exact(int(cl[0]))
        else:
            req.framing = "none"

    def _read_chunked(self, req: ReceivedRequest) -> bytes:
        body = bytearray()
        while True:
            line = self.read_until(b"\r\n", limit=4096)[:-2]
            size_text = line.split(b";", 1)[0].rstrip(b" \t")
            if not size_text or any(c not in _HEX for c in size_text) or len(size_text) > 16:
                raise BackendParseError(f"bad chunk size line {line!r}")
            size = int(size_text, 16)
            req.chunk_sizes.append(size)
            if size == 0:
                break
            body += self.read_exact(size)
            if self.read_exact(2) != b"\r\n":
                raise BackendParseError("chunk data not followed by CRLF")
        while True:
            line = self.read_until(b"\r\n", limit=65536)
            if line == b"\r\n":
                break
            name, sep, value = line[:-2].partition(b":")
            if not sep:
                raise BackendParseError(f"bad trailer line {line!r}")
            req.trailers.append((name.decode("latin-1"), value.strip(b" \t").decode("latin-1")))
        return bytes(body)


def _parse_request_head(head: bytes) -> ReceivedRequest:
    lines = head[:-4].split(b"\r\n")
    for line in lines:
        if b"\r" in line or b"\n" in line or b"\x00" in line:
            raise BackendParseError(f"bare CR/LF or NUL in head {head[:300]!r}")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or not parts[0] or not parts[1]:
        raise BackendParseError(f"bad request line {lines[0][:300]!r}")
    method, target, version = parts
    if any(c not in _TCHAR for c in method):
        raise BackendParseError(f"bad method {method!r}")
    if version not in (b"HTTP/1.1", b"HTTP/1.0"):
        raise BackendParseError(f"bad version {version!r}")
    headers = []
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t"):
            raise BackendParseError(f"obs-fold in {head[:300]!r}")
        name, sep, value = line.partition(b":")
        if not sep or not name or any(c not in _TCHAR for c in name):
            raise BackendParseError(f"bad field line {line[:300]!r}")
        headers.append((name.decode("ascii"), value.strip(b" \t").decode("latin-1")))
    return ReceivedRequest(method.decode("ascii"), target.decode("latin-1"),
                           version.decode("ascii"), headers)


# ---------------------------------------------------------------------------------------
# Behaviours


class Behaviour:
    """How a backend answers. Override what you need."""

    def on_connect(self, conn: BackendConn) -> bool:
        """Called once per connection. Return False to stop (the connection is closed)."""
        return True

    def on_head(self, conn: BackendConn, req: ReceivedRequest) -> None:
        """Called after the head is parsed, before the body is read."""

    def on_request(self, conn: BackendConn, req: ReceivedRequest) -> bool:
        """Answer `req`. Return False to close the connection afterwards."""
        raise NotImplementedError


def echo_payload(conn: BackendConn, req: ReceivedRequest) -> dict:
    inline = len(req.body) <= ECHO_BODY_INLINE_MAX
    return {
        "backend": conn.backend.name,
        "conn": conn.index,
        "seq": req.seq,
        "method": req.method,
        "target": req.target,
        "version": req.version,
        "headers": [[k, v] for k, v in req.headers],
        "body": req.body.decode("latin-1") if inline else None,
        "body_len": len(req.body),
        "body_sha256": hashlib.sha256(req.body).hexdigest(),
        "framing": req.framing,
        "trailers": [[k, v] for k, v in req.trailers],
    }


class Echo(Behaviour):
    def __init__(self, status=200, extra_headers=(), close=False):
        self.status = status
        self.extra_headers = list(extra_headers)
        self.close = close

    def on_request(self, conn, req):
        body = json.dumps(echo_payload(conn, req)).encode()
        headers = [("Content-Type", "application/json"), ("X-Backend", conn.backend.name)]
        headers += self.extra_headers
        if self.close:
            headers.append(("Connection", "close"))
        conn.respond(req, self.status, headers, body)
        return not self.close


def echo(status=200, extra_headers=(), close=False) -> Behaviour:
    """200 with a JSON body describing exactly what arrived (method, target, version,
    headers in order, body or its sha256 when over 1 MiB, framing, trailers).
    close=True adds `Connection: close` and closes after the response."""
    return Echo(status, extra_headers, close)


class Fixed(Behaviour):
    def __init__(self, status, headers, body, reason, auto_length, close):
        self.status, self.headers, self.body = status, list(headers), body
        self.reason, self.auto_length, self.close = reason, auto_length, close

    def on_request(self, conn, req):
        conn.respond(req, self.status, self.headers, self.body, self.reason, self.auto_length)
        return not self.close


def fixed(status=200, headers=(), body=b"", reason=None, auto_length=True, close=False):
    """A fixed response. Content-Length is added unless framing is given, the status has
    no body (1xx/204/304) or auto_length=False; HEAD gets the head only."""
    return Fixed(status, headers, body, reason, auto_length, close)


class Chunked(Behaviour):
    def __init__(self, parts, delay, trailers, headers, extensions):
        self.parts, self.delay, self.trailers = list(parts), delay, list(trailers)
        self.headers, self.extensions = list(headers), extensions

    def on_request(self, conn, req):
        conn.send_head(200, [("Transfer-Encoding", "chunked")] + self.headers)
        if req.method == "HEAD":
            conn.responses_sent += 1
            return True
        for i, part in enumerate(self.parts):
            ext = self.extensions[i] if self.extensions and i < len(self.extensions) else ""
            conn.send(f"{len(part):x}{ext}\r\n".encode() + part + b"\r\n")
            if self.delay and not conn.sleep(self.delay):
                return False
        tail = b"0\r\n" + b"".join(f"{k}: {v}\r\n".encode() for k, v in self.trailers) + b"\r\n"
        conn.send(tail)
        conn.responses_sent += 1
        return True


def chunked(parts, delay=0.01, trailers=(), headers=(), extensions=None) -> Behaviour:
    """200 with Transfer-Encoding: chunked, one chunk per part, `delay` seconds apart."""
    parts = [p for p in parts if p]
    return Chunked(parts, delay, trailers, headers, extensions)


class CloseDelimited(Behaviour):
    def __init__(self, body, headers, connection_close, delay):
        self.body, self.headers = body, list(headers)
        self.connection_close, self.delay = connection_close, delay

    def on_request(self, conn, req):
        headers = list(self.headers)
        if self.connection_close:
            headers.append(("Connection", "close"))
        conn.send_head(200, headers)
        if req.method != "HEAD":
            half = len(self.body) // 2
            conn.send(self.body[:half])
            if self.delay and not conn.sleep(self.delay):
                return False
            conn.send(self.body[half:])
        conn.responses_sent += 1
        return False


def close_delimited(body, headers=(), connection_close=False, delay=0.05) -> Behaviour:
    """HTTP/1.1 200 with neither Content-Length nor Transfer-Encoding: the body ends when
    the backend closes (RFC 9112 6.3 rule 8). No `Connection: close` unless asked."""
    return CloseDelimited(body, headers, connection_close, delay)


class SlowHead(Behaviour):
    def __init__(self, seconds, then):
        self.seconds, self.then = seconds, then

    def on_request(self, conn, req):
        if not conn.sleep(self.seconds):
            return False
        return self.then.on_request(conn, req)


def slow_head(seconds, then=None) -> Behaviour:
    """Wait `seconds` after the full request, then answer like `then` (default echo)."""
    return SlowHead(seconds, then or echo())


class SlowBody(Behaviour):
    def __init__(self, body, chunk, delay, stall_after, stall):
        self.body, self.chunk, self.delay = body, chunk, delay
        self.stall_after, self.stall = stall_after, stall

    def on_request(self, conn, req):
        conn.send_head(200, [("Content-Length", str(len(self.body)))])
        sent = 0
        while sent < len(self.body):
            if self.stall_after is not None and sent >= self.stall_after:
                conn.sleep(self.stall)
                return False  # a stalled body never resumes; close
            piece = self.body[sent:sent + self.chunk]
            conn.send(piece)
            sent += len(piece)
            if self.delay and not conn.sleep(self.delay):
                return False
        conn.responses_sent += 1
        return True


def slow_body(body=b"x" * 4096, chunk=512, delay=0.05, stall_after=None, stall=30.0):
    """Content-Length response whose body trickles out `chunk` bytes every `delay` s.
    With stall_after=N the body stops after N bytes for `stall` seconds, then closes."""
    return SlowBody(body, chunk, delay, stall_after, stall)


class CloseWithoutResponse(Behaviour):
    def on_request(self, conn, req):
        return False


def close_without_response() -> Behaviour:
    """Read the whole request, then close (FIN) without a byte of response."""
    return CloseWithoutResponse()


class Reset(Behaviour):
    def on_request(self, conn, req):
        conn.reset()
        return False


def reset() -> Behaviour:
    """Read the whole request, then close with SO_LINGER 0 (RST)."""
    return Reset()


class RawResponse(Behaviour):
    def __init__(self, data, close, delay):
        self.data, self.close, self.delay = data, close, delay

    def on_request(self, conn, req):
        conn.send(self.data)
        if self.delay:
            conn.sleep(self.delay)
        return not self.close


def raw_response(data: bytes, close=True, delay=0.1) -> Behaviour:
    """Answer every request with exactly `data`, then (by default) close after `delay`."""
    return RawResponse(data, close, delay)


def garbage(data=b"\x16\x03\x01 this is not HTTP \x00\xff\r\n\r\n") -> Behaviour:
    """Answer with non-HTTP bytes, then close."""
    return RawResponse(data, True, 0.2)


class KeepaliveThenClose(Behaviour):
    def __init__(self, n, mode, delay):
        assert mode in ("after_response", "on_next_request")
        self.n, self.mode, self.delay = n, mode, delay
        self.inner = echo()

    def on_request(self, conn, req):
        if self.mode == "on_next_request" and conn.responses_sent >= self.n:
            return False  # the request was written; close as if the idle timer fired
        self.inner.on_request(conn, req)
        if self.mode == "after_response" and conn.responses_sent >= self.n:
            if self.delay:
                conn.sleep(self.delay)
            return False
        return True


def keepalive_then_close_after(n=1, mode="on_next_request", delay=0.0) -> Behaviour:
    """Echo with keep-alive (no `Connection: close` ever), but each connection dies after
    n responses without telling: mode "after_response" closes right after the n-th
    response; mode "on_next_request" reads the (n+1)-th request and closes without
    answering (the pooled-connection race a proxy must retry through)."""
    return KeepaliveThenClose(n, mode, delay)


class Upgrade(Behaviour):
    def __init__(self, greeting, protocol):
        self.greeting, self.protocol = greeting, protocol

    def on_request(self, conn, req):
        if not req.is_upgrade():
            return echo().on_request(conn, req)
        headers = [("Upgrade", self.protocol), ("Connection", "Upgrade")]
        key = req.header("sec-websocket-key")
        if key:
            import base64
            digest = hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode())
            headers.append(("Sec-WebSocket-Accept", base64.b64encode(digest.digest()).decode()))
        head = b"HTTP/1.1 101 Switching Protocols\r\n"
        head += b"".join(f"{k}: {v}\r\n".encode() for k, v in headers) + b"\r\n"
        conn.send(head + self.greeting)  # one write: tunnel bytes right behind the 101
        conn.backend.upgrades += 1
        while True:
            data = conn.recv_some()
            if not data:
                return False
            conn.backend._add_tunnel(data)
            if b"please-close" in data:
                conn.send(b"bye\n")
                return False
            conn.send(b"echo:" + data)


def upgrade(greeting=b"hello from backend\n", protocol="websocket") -> Behaviour:
    """Upgrade requests (Upgrade plus a `Connection: upgrade` option) get `101 Switching
    Protocols` plus `greeting` in the same write;
    then every chunk received is recorded in .tunnel_bytes and echoed back as
    b"echo:" + chunk. A chunk containing b"please-close" gets b"bye\\n" and a close.
    Requests without Upgrade are echoed as normal HTTP."""
    return Upgrade(greeting, protocol)


class RefuseUpgrade(Behaviour):
    def on_request(self, conn, req):
        if req.is_upgrade():
            conn.respond(req, 200, [("Content-Type", "text/plain")], b"upgrade refused\n")
            return True
        return echo().on_request(conn, req)


def refuse_upgrade() -> Behaviour:
    """Answer upgrade requests with a plain 200 (keep-alive); echo everything else."""
    return RefuseUpgrade()


class Expect100(Behaviour):
    def on_head(self, conn, req):
        if (req.header("expect") or "").lower() == "100-continue":
            conn.send(b"HTTP/1.1 100 Continue\r\n\r\n")
            conn.backend.continues_sent += 1

    def on_request(self, conn, req):
        return echo().on_request(conn, req)


def expect_100() -> Behaviour:
    """On `Expect: 100-continue`, send `100 Continue` before reading the body; then echo."""
    return Expect100()


class Large(Behaviour):
    def __init__(self, n, chunk, delay):
        self.n, self.chunk, self.delay = n, chunk, delay
        self.body = large_body(n)

    def on_request(self, conn, req):
        conn.send_head(200, [("Content-Length", str(self.n)),
                             ("Content-Type", "application/octet-stream")])
        if req.method == "HEAD":
            return True
        view = memoryview(self.body)
        for off in range(0, self.n, self.chunk):
            conn.send(view[off:off + self.chunk])
            if self.delay and not conn.sleep(self.delay):
                return False
        conn.responses_sent += 1
        return True


def large(n_bytes, chunk=65536, delay=0.0) -> Behaviour:
    """Content-Length response of `large_body(n_bytes)`, written `chunk` bytes at a time
    (blocking sends, so the backend only advances as fast as the proxy reads)."""
    return Large(n_bytes, chunk, delay)


class Route(Behaviour):
    def __init__(self, mapping, default):
        self.mapping = sorted(mapping.items(), key=lambda kv: -len(kv[0]))
        self.default = default

    def pick(self, req) -> Behaviour:
        for prefix, b in self.mapping:
            if req.path.startswith(prefix):
                return b
        return self.default

    def on_head(self, conn, req):
        self.pick(req).on_head(conn, req)

    def on_request(self, conn, req):
        return self.pick(req).on_request(conn, req)


def route(mapping: dict, default=None) -> Behaviour:
    """Dispatch on the longest matching path prefix; `default` (echo) otherwise."""
    return Route(mapping, default or echo())


# ---------------------------------------------------------------------------------------
# The server


def _record_sni(sock, name, _ctx):
    """A TLS backend's SNI callback: the name the client sent, on its socket."""
    sock.sni = name


class Backend:
    _names = 0

    def __init__(self, behaviour: Behaviour | None = None, port: int = 0, name: str | None = None,
                 sndbuf: int | None = None, backlog: int = 128, host: str = "127.0.0.1",
                 tls=None, unix_path: str | None = None):
        Backend._names += 1
        # An ssl.SSLContext (server side): every connection shakes hands first, in its own
        # thread; `.tls_handshakes` records each (SNI, resumed, version, client certificate)
        # and `.tls_failures` each handshake that failed.
        self.tls = tls
        if tls is not None:
            tls.sni_callback = _record_sni
        self.tls_handshakes: list[dict] = []
        self.tls_failures: list[str] = []
        self.name = name or f"b{Backend._names}"
        self.behaviour = behaviour or echo()
        self.sndbuf = sndbuf
        self.requests: list[ReceivedRequest] = []
        self.errors: list[str] = []
        self.exceptions: list[str] = []
        self.raw_streams: list[bytearray] = []
        self.connections = 0
        self.bytes_received = 0
        self.bytes_sent = 0
        self.upgrades = 0
        self.continues_sent = 0
        self.tunnel_bytes = bytearray()
        self.closed_connections = 0
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._stopping = threading.Event()
        self._conns: set[BackendConn] = set()
        self._threads: list[threading.Thread] = []

        # `unix_path`: listen on a Unix socket there (what `--backend unix:PATH` names).
        self.unix_path = unix_path
        if unix_path is not None:
            self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._listener.bind(unix_path)
            self._listener.listen(backlog)
            self._listener.settimeout(RECV_POLL)
            self.port = None
            self.address = f"unix:{unix_path}"
        else:
            v6 = ":" in host
            self._listener = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET,
                                           socket.SOCK_STREAM)
            self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._listener.bind((host, port))
            self._listener.listen(backlog)
            self._listener.settimeout(RECV_POLL)
            self.port = self._listener.getsockname()[1]
            self.address = f"[{host}]:{self.port}" if v6 else f"{host}:{self.port}"
        self._accept_thread = threading.Thread(target=self._accept_loop, daemon=True,
                                               name=f"backend-{self.name}-accept")
        self._accept_thread.start()

    def __repr__(self):
        return (f"Backend({self.name} {self.address}, connections={self.connections}, "
                f"requests={len(self.requests)}, errors={self.errors})")

    # -- accounting --

    def _add_received(self, n):
        with self._lock:
            self.bytes_received += n

    def _add_sent(self, n):
        with self._lock:
            self.bytes_sent += n

    def _add_tunnel(self, data):
        with self._lock:
            self.tunnel_bytes += data
            self._cond.notify_all()

    # -- queries --

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> bool:
        end = time.monotonic() + timeout
        with self._cond:
            while len(self.requests) < n:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
            return True

    def wait_for(self, predicate, timeout: float = 5.0) -> bool:
        end = time.monotonic() + timeout
        with self._cond:
            while not predicate():
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.05))
            return True

    def targets(self) -> list[str]:
        return [r.target for r in self.requests]

    def clear(self):
        """Forget recorded requests and counters (not the live connections)."""
        with self._lock:
            self.requests.clear()
            self.errors.clear()
            self.connections = 0
            self.bytes_received = 0
            self.bytes_sent = 0

    # -- serving --

    def _accept_loop(self):
        while not self._stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            sock.settimeout(RECV_POLL)
            if self.sndbuf:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.sndbuf)
            with self._lock:
                index = self.connections
                self.connections += 1
                conn = BackendConn(self, sock, index)
                self.raw_streams.append(conn.raw)
                self._conns.add(conn)
                self._cond.notify_all()
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True,
                                 name=f"backend-{self.name}-conn{index}")
            self._threads.append(t)
            t.start()

    def _handshake(self, conn: BackendConn) -> bool:
        """TLS on the accepted socket; False (recorded) when the handshake fails."""
        conn.sock.settimeout(5.0)
        try:
            conn.sock = self.tls.wrap_socket(conn.sock, server_side=True)
        except (OSError, ValueError) as e:
            with self._lock:
                self.tls_failures.append(f"{type(e).__name__}: {e}")
                self._cond.notify_all()
            return False
        conn.sock.settimeout(RECV_POLL)
        cert = conn.sock.getpeercert()
        with self._lock:
            self.tls_handshakes.append({
                "sni": getattr(conn.sock, "sni", None),
                "reused": conn.sock.session_reused,
                "version": conn.sock.version(),
                "client_cert": dict(x[0] for x in cert["subject"]) if cert else None,
            })
            self._cond.notify_all()
        return True

    def _serve(self, conn: BackendConn):
        try:
            if self.tls is not None and not self._handshake(conn):
                return
            if not self.behaviour.on_connect(conn):
                return
            while not self._stopping.is_set():
                try:
                    req = conn.read_request(self.behaviour)
                except BackendParseError as e:
                    with self._lock:
                        self.errors.append(f"conn {conn.index}: {e}")
                        self._cond.notify_all()
                    try:
                        conn.send(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 21\r\n"
                                  b"Connection: close\r\n\r\nbackend parse error\r\n")
                    except OSError:
                        pass
                    return
                if req is None:
                    return
                with self._lock:
                    self.requests.append(req)
                    self._cond.notify_all()
                keep = self.behaviour.on_request(conn, req)
                if not keep or req.wants_close() or conn.closed:
                    return
        except _Closed:
            return
        except OSError:
            return  # the proxy went away mid-response: a normal event here
        except Exception as e:  # a bug in a behaviour: keep it visible to the test
            with self._lock:
                self.exceptions.append(f"conn {conn.index}: {type(e).__name__}: {e}")
        finally:
            conn.close()
            with self._lock:
                self._conns.discard(conn)
                self.closed_connections += 1
                self._cond.notify_all()

    def stop(self, timeout: float = 3.0):
        if self._stopping.is_set():
            return
        self._stopping.set()
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes a blocked accept() on Linux
        except OSError:
            pass
        try:
            self._listener.close()
        except OSError:
            pass
        with self._lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        end = time.monotonic() + timeout
        self._accept_thread.join(max(0.0, end - time.monotonic()))
        for t in list(self._threads):
            t.join(max(0.0, end - time.monotonic()))


class RefusingPort:
    """A 127.0.0.1 port with nothing listening: connects to it are refused (RST). The port
    stays reserved (bound, never listening) until .release(), so nothing else takes it."""

    def __init__(self):
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"

    def release(self):
        """Free the port (e.g. to start a Backend on it)."""
        self._sock.close()


class BlackholePort:
    """A 127.0.0.1 port whose SYNs are dropped, so connects hang until they time out.

    A listener with backlog 0 whose accept queue is already full makes Linux drop new SYNs
    (tcp_conn_request: sk_acceptq_is_full -> drop). `.works` says whether a probe connect
    really hung; tests skip when it did not."""

    def __init__(self, probe_timeout: float = 0.3):
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(0)
        self.port = self._listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self._fillers: list[socket.socket] = []
        self.works = False
        for _ in range(8):
            if self._probe(probe_timeout):
                self.works = True
                break

    def _probe(self, timeout: float) -> bool:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect(("127.0.0.1", self.port))
        except (socket.timeout, TimeoutError):
            s.close()
            return True
        except OSError:
            s.close()
            return False
        self._fillers.append(s)  # it got in: it now fills the queue
        return False

    def close(self):
        for s in self._fillers:
            s.close()
        self._listener.close()


# ---------------------------------------------------------------------------------------
# Behaviours and helpers for the balancing and resilience tests

HEALTH_CHECK_USER_AGENT = "sluice-health-check"


def is_probe(req: ReceivedRequest) -> bool:
    """True for sluice's active health probes (User-Agent: sluice-health-check)."""
    return req.header("user-agent") == HEALTH_CHECK_USER_AGENT


def traffic(backend: "Backend") -> list[ReceivedRequest]:
    """The backend's recorded requests without sluice's active health probes."""
    with backend._lock:
        reqs = list(backend.requests)
    return [r for r in reqs if not is_probe(r)]


class HealthEndpoint(Behaviour):
    def __init__(self, path, status, then):
        self.path, self.status, self.then = path, status, then
        self.probes = 0
        self._lock = threading.Lock()

    def on_head(self, conn, req):
        if req.path != self.path:
            self.then.on_head(conn, req)

    def on_request(self, conn, req):
        if req.path != self.path:
            return self.then.on_request(conn, req)
        with self._lock:
            self.probes += 1
            status = self.status
        conn.respond(req, status, [("Content-Type", "text/plain")],
                     f"health {status}\n".encode())
        return not req.wants_close()

    def set_status(self, status: int):
        with self._lock:
            self.status = status


def health_endpoint(path="/health", status=200, then=None) -> HealthEndpoint:
    """Requests for `path` get `status` (switch it at any time with .set_status(n)) and a
    short text body; `.probes` counts them. Everything else is answered like `then`
    (default echo)."""
    return HealthEndpoint(path, status, then or echo())


class Switch(Behaviour):
    def __init__(self, behaviour):
        self.behaviour = behaviour

    def set(self, behaviour: Behaviour):
        self.behaviour = behaviour

    def on_connect(self, conn):
        return self.behaviour.on_connect(conn)

    def on_head(self, conn, req):
        self.behaviour.on_head(conn, req)

    def on_request(self, conn, req):
        return self.behaviour.on_request(conn, req)


def switchable(behaviour: Behaviour | None = None) -> Switch:
    """Answers like `behaviour` (default echo) until .set(other) switches it; the switch
    applies to the next request on every connection."""
    return Switch(behaviour or echo())


class TruncatedBody(Behaviour):
    def __init__(self, size, sent, delay):
        self.size, self.sent, self.delay = size, sent, delay

    def on_request(self, conn, req):
        conn.send_head(200, [("Content-Length", str(self.size)),
                             ("Content-Type", "application/octet-stream"),
                             ("X-Backend", conn.backend.name)])
        conn.send(b"t" * self.sent)
        conn.sleep(self.delay)
        return False  # FIN in the middle of the body


def truncated_body(size=4096, sent=None, delay=0.05) -> Behaviour:
    """200 with `Content-Length: size`, then only `sent` body bytes (default half), a
    pause of `delay` s (so the head has certainly been relayed), then a close (FIN)."""
    return TruncatedBody(size, size // 2 if sent is None else sent, delay)


class Stall(Behaviour):
    def on_request(self, conn, req):
        conn.backend._stopping.wait()
        return False


def stall() -> Behaviour:
    """Accept and read the whole request, then never answer (until the backend stops)."""
    return Stall()


def kill_backend(backend: "Backend", timeout: float = 3.0):
    """Kill a backend the hard way: its listener closes (new connects are refused) and every
    open connection is reset (RST, no FIN first). The port can then be reused with
    Backend(..., port=backend.port)."""
    if backend._stopping.is_set():
        return
    backend._stopping.set()
    try:
        backend._listener.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        backend._listener.close()
    except OSError:
        pass
    with backend._lock:
        conns = list(backend._conns)
    for c in conns:
        try:
            c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            # SHUT_RD sends nothing to the peer but wakes the thread blocked in recv, which
            # then closes the socket: with a zero linger time that close is a RST.
            c.sock.shutdown(socket.SHUT_RD)
        except OSError:
            pass
    end = time.monotonic() + timeout
    backend._accept_thread.join(max(0.0, end - time.monotonic()))
    for t in list(backend._threads):
        t.join(max(0.0, end - time.monotonic()))
