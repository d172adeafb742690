"""Raw-socket HTTP/1.1 client helpers for the sluice black-box tests.

Everything here works on bytes the test controls exactly. The response parser is strict on
purpose (CRLF line endings, valid status line, well-formed chunked framing): the proxy's
output is under test too, so a sloppy parser would hide bugs.

Main entry points:
    Client(port)                      a keep-alive connection with its own read buffer
    read_response(sock_or_client)     parse one response (HEAD/1xx/204/304 aware)
    request(port, method, target,...) one request on a fresh connection -> Response
    send_raw(port, data) -> bytes     write bytes, read until close or timeout
    exchange(port, data) -> (bytes, closed)
    build_request(...), chunk_body(...)
"""

from __future__ import annotations

import errno
import json
import select
import socket
import time
import weakref
from dataclasses import dataclass, field

from headers import HeaderAccess, tokens

DEFAULT_TIMEOUT = 5.0
HEAD_LIMIT = 1 << 20  # a response head larger than this is a bug in the proxy


class ProtocolError(AssertionError):
    """The peer sent bytes that are not a well-formed HTTP/1.1 response."""


class ConnectionClosed(ConnectionError):
    """EOF (or reset) before a complete response arrived. `.partial` holds what did."""

    def __init__(self, message: str, partial: bytes = b""):
        super().__init__(message)
        self.partial = partial


# ---------------------------------------------------------------------------------------
# Time bounds


class Deadline:
    """A point in time that every bounded wait in the suite is measured against."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self.end - time.monotonic())

    def expired(self) -> bool:
        return time.monotonic() >= self.end

    def check(self, what: str = "operation") -> float:
        """Return the remaining time, raising TimeoutError if none is left."""
        left = self.end - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"{what}: deadline of {self.seconds:.1f}s passed")
        return left


def wait_until(predicate, timeout: float, interval: float = 0.02, what: str = "") -> bool:
    """Poll `predicate` until it is truthy or `timeout` passes. Returns its last truth."""
    deadline = Deadline(timeout)
    while True:
        if predicate():
            return True
        if deadline.expired():
            return False
        time.sleep(min(interval, max(0.001, deadline.remaining())))


# ---------------------------------------------------------------------------------------
# Connections


def connect(port: int, timeout: float = DEFAULT_TIMEOUT, rcvbuf: int | None = None,
            host: str = "127.0.0.1") -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        # Must be set before connect so the window is fixed from the handshake on.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(timeout)
    try:
        sock.connect((host, port))
    except BaseException:
        sock.close()
        raise
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


class BufferedSocket:
    """A socket plus the bytes read from it but not consumed yet (pipelining, tunnels)."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = bytearray()
        self.eof = False
        self.reset = False

    def fill(self, deadline: Deadline) -> bool:
        """Read once more into the buffer. False on EOF/reset. TimeoutError on deadline."""
        if self.eof:
            return False
        left = deadline.check("waiting for bytes from sluice")
        self.sock.settimeout(left)
        try:
            data = self.sock.recv(65536)
        except socket.timeout:
            raise TimeoutError(
                f"no bytes within {deadline.seconds:.1f}s (have {len(self.buf)} buffered: "
                f"{bytes(self.buf[:200])!r})") from None
        except ConnectionResetError:
            self.eof = True
            self.reset = True
            return False
        if not data:
            self.eof = True
            return False
        self.buf += data
        return True

    def read_until(self, marker: bytes, deadline: Deadline, limit: int = HEAD_LIMIT) -> bytes:
        start = 0
        while True:
            idx = self.buf.find(marker, start)
            if idx >= 0:
                end = idx + len(marker)
                out = bytes(self.buf[:end])
                del self.buf[:end]
                return out
            if len(self.buf) > limit:
                raise ProtocolError(f"no {marker!r} within {limit} bytes")
            start = max(0, len(self.buf) - len(marker) + 1)
            if not self.fill(deadline):
                raise ConnectionClosed(
                    f"connection closed while waiting for {marker!r}", bytes(self.buf))

    def read_exact(self, n: int, deadline: Deadline) -> bytes:
        while len(self.buf) < n:
            if not self.fill(deadline):
                raise ConnectionClosed(
                    f"connection closed after {len(self.buf)} of {n} bytes", bytes(self.buf))
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def read_to_close(self, deadline: Deadline) -> bytes:
        while self.fill(deadline):
            pass
        out = bytes(self.buf)
        self.buf.clear()
        return out

    def read_some(self, timeout: float) -> bytes:
        """Whatever is buffered, or the next bytes to arrive within `timeout` (b"" on
        EOF or when nothing arrives)."""
        if not self.buf and not self.eof:
            try:
                self.fill(Deadline(timeout))
            except TimeoutError:
                return b""
        out = bytes(self.buf)
        self.buf.clear()
        return out

    def wait_closed(self, timeout: float) -> bool:
        """True if the peer closes (FIN or RST) within `timeout`. Bytes that arrive in the
        meantime stay in `.buf` for inspection."""
        deadline = Deadline(timeout)
        try:
            while self.fill(deadline):
                if len(self.buf) > HEAD_LIMIT:
                    return False
        except TimeoutError:
            return False
        return True

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


_buffers: "weakref.WeakKeyDictionary[socket.socket, BufferedSocket]" = weakref.WeakKeyDictionary()


def _buffered(conn) -> BufferedSocket:
    if isinstance(conn, BufferedSocket):
        return conn
    if isinstance(conn, Client):
        return conn.bsock
    bs = _buffers.get(conn)
    if bs is None:
        bs = BufferedSocket(conn)
        _buffers[conn] = bs
    return bs


# ---------------------------------------------------------------------------------------
# Responses


@dataclass
class Response(HeaderAccess):
    version: str
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes = b""
    framing: str = "none"  # none | length | chunked | close
    trailers: list[tuple[str, str]] = field(default_factory=list)
    interim: list["Response"] = field(default_factory=list)  # 1xx seen before this one
    raw_head: bytes = b""
    chunk_sizes: list[int] = field(default_factory=list)

    def json(self):
        return json.loads(self.body.decode("utf-8"))

    def __repr__(self):
        body = self.body if len(self.body) <= 200 else self.body[:200] + b"..."
        return (f"Response({self.status} {self.reason!r}, framing={self.framing}, "
                f"headers={self.headers!r}, body[{len(self.body)}]={body!r})")


_TCHAR = set(b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _parse_head(head: bytes) -> tuple[str, int, str, list[tuple[str, str]]]:
    assert head.endswith(b"\r\n\r\n")
    lines = head[:-4].split(b"\r\n")
    for line in lines:
        if b"\n" in line or b"\r" in line:
            raise ProtocolError(f"bare CR or LF in response head: {head!r}")
    status_line = lines[0]
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or len(parts[0]) != 8:
        raise ProtocolError(f"bad status line: {status_line!r}")
    version = parts[0].decode("ascii")
    if len(parts[1]) != 3 or not parts[1].isdigit():
        raise ProtocolError(f"bad status code: {status_line!r}")
    status = int(parts[1])
    reason = parts[2].decode("latin-1") if len(parts) == 3 else ""
    headers = []
    for line in lines[1:]:
        if line[:1] in (b" ", b"\t"):
            raise ProtocolError(f"obs-fold in response head: {head!r}")
        name, sep, value = line.partition(b":")
        if not sep or not name or any(c not in _TCHAR for c in name):
            raise ProtocolError(f"bad header line {line!r} in {head!r}")
        headers.append((name.decode("ascii"), value.strip(b" \t").decode("latin-1")))
    return version, status, reason, headers


def _read_chunked(bs: BufferedSocket, deadline: Deadline, resp: Response) -> bytes:
    body = bytearray()
    while True:
        line = bs.read_until(b"\r\n", deadline, limit=4096)[:-2]
        size_text = line.split(b";", 1)[0].strip(b" \t")
        if not size_text or any(c not in b"0123456789abcdefABCDEF" for c in size_text):
            raise ProtocolError(f"bad chunk size line {line!r}")
        size = int(size_text, 16)
        resp.chunk_sizes.append(size)
        if size == 0:
            break
        body += bs.read_exact(size, deadline)
        crlf = bs.read_exact(2, deadline)
        if crlf != b"\r\n":
            raise ProtocolError(f"chunk data not followed by CRLF: {crlf!r}")
    while True:
        line = bs.read_until(b"\r\n", deadline, limit=65536)
        if line == b"\r\n":
            break
        name, _, value = line[:-2].partition(b":")
        resp.trailers.append((name.decode("latin-1"), value.strip().decode("latin-1")))
    return bytes(body)


def read_response(conn, method: str = "GET", timeout: float = DEFAULT_TIMEOUT,
                  skip_interim: bool = True) -> Response:
    """Parse one response from `conn` (a socket, BufferedSocket or Client).

    Interim 1xx responses (other than 101) are collected in `.interim` and skipped unless
    `skip_interim` is False. HEAD requests and 1xx/204/304 statuses have no body.
    Bytes after the response stay buffered for the next call on the same socket."""
    bs = _buffered(conn)
    deadline = Deadline(timeout)
    interim = []
    while True:
        head = bs.read_until(b"\r\n\r\n", deadline)
        version, status, reason, headers = _parse_head(head)
        resp = Response(version, status, reason, headers, raw_head=head)
        if 100 <= status < 200 and status != 101 and skip_interim:
            interim.append(resp)
            continue
        break
    resp.interim = interim
    if method.upper() == "HEAD" or 100 <= status < 200 or status in (204, 304):
        resp.framing = "none"
    elif resp.header_all("transfer-encoding"):
        codings = [t.strip().lower() for v in resp.header_all("transfer-encoding")
                   for t in v.split(",") if t.strip()]
        if codings and codings[-1] == "chunked":
            resp.framing = "chunked"
            resp.body = _read_chunked(bs, deadline, resp)
        else:
            resp.framing = "close"
            resp.body = bs.read_to_close(deadline)
    elif resp.header_all("content-length"):
        values = resp.header_all("content-length")
        if len(set(values)) != 1 or not values[0].isdigit():
            raise ProtocolError(f"bad Content-Length in response: {values!r}")
        resp.framing = "length"
        resp.body = bs.read_exact(int(values[0]), deadline)
    else:
        resp.framing = "close"
        resp.body = bs.read_to_close(deadline)
    return resp


# ---------------------------------------------------------------------------------------
# Requests


def _header_list(headers) -> list[tuple[str, str]]:
    if headers is None:
        return []
    if isinstance(headers, dict):
        return list(headers.items())
    return list(headers)


def build_request(method: str = "GET", target: str = "/", headers=None, body: bytes | None = None,
                  version: str = "HTTP/1.1", host: str | None = "sluice.test") -> bytes:
    """Serialize a request. Adds Host (unless given or host=None) and Content-Length when a
    body is given and no framing header is. Header values are sent exactly as given."""
    hdrs = _header_list(headers)
    names = {k.lower() for k, _ in hdrs}
    if host is not None and "host" not in names:
        hdrs.insert(0, ("Host", host))
    if body is not None and "content-length" not in names and "transfer-encoding" not in names:
        hdrs.append(("Content-Length", str(len(body))))
    out = bytearray(f"{method} {target} {version}\r\n".encode("latin-1"))
    for k, v in hdrs:
        out += f"{k}: {v}\r\n".encode("latin-1")
    out += b"\r\n"
    if body:
        out += body
    return bytes(out)


def chunk_body(parts, extensions=None, trailers=None, last_ext: str = "") -> bytes:
    """Encode `parts` as chunked data. `extensions[i]` (e.g. ';a=b') is added after the i-th
    chunk size; trailers is a list of (name, value)."""
    out = bytearray()
    for i, part in enumerate(parts):
        if not part:
            continue
        ext = extensions[i] if extensions and i < len(extensions) and extensions[i] else ""
        out += f"{len(part):x}{ext}\r\n".encode("latin-1") + part + b"\r\n"
    out += f"0{last_ext}\r\n".encode("latin-1")
    for k, v in trailers or []:
        out += f"{k}: {v}\r\n".encode("latin-1")
    out += b"\r\n"
    return bytes(out)


class Client:
    """One client connection to sluice (keep-alive capable) with its own read buffer."""

    def __init__(self, port: int, timeout: float = DEFAULT_TIMEOUT, rcvbuf: int | None = None,
                 host: str = "sluice.test"):
        self.port = port
        self.timeout = timeout
        self.host = host
        self.sock = connect(port, timeout, rcvbuf=rcvbuf)
        self.bsock = _buffered(self.sock)

    def send(self, data: bytes):
        self.sock.settimeout(self.timeout)
        self.sock.sendall(data)

    def send_request(self, method="GET", target="/", headers=None, body=None,
                     version="HTTP/1.1", host=None):
        self.send(build_request(method, target, headers, body, version,
                                host=self.host if host is None else host))

    def read_response(self, method="GET", timeout=None, skip_interim=True) -> Response:
        return read_response(self.bsock, method, timeout or self.timeout, skip_interim)

    def request(self, method="GET", target="/", headers=None, body=None, version="HTTP/1.1",
                host=None, timeout=None) -> Response:
        self.send_request(method, target, headers, body, version, host)
        return self.read_response(method, timeout)

    def read_some(self, timeout: float) -> bytes:
        return self.bsock.read_some(timeout)

    def read_exact(self, n: int, timeout: float | None = None) -> bytes:
        return self.bsock.read_exact(n, Deadline(timeout or self.timeout))

    def wait_closed(self, timeout: float = 2.0) -> bool:
        return self.bsock.wait_closed(timeout)

    def shutdown_write(self):
        self.sock.shutdown(socket.SHUT_WR)

    def close(self):
        self.bsock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def request(port: int, method: str = "GET", target: str = "/", headers=None,
            body: bytes | None = None, version: str = "HTTP/1.1", host: str | None = "sluice.test",
            timeout: float = DEFAULT_TIMEOUT) -> Response:
    """One request on a fresh connection; the connection is closed afterwards."""
    with Client(port, timeout, host=host or "sluice.test") as c:
        c.send(build_request(method, target, headers, body, version, host=host))
        return c.read_response(method, timeout)


def exchange(port: int, data: bytes, timeout: float = 3.0, shutdown: bool = False
             ) -> tuple[bytes, bool]:
    """Send `data` (tolerating an early close by the peer), then read until the peer closes
    or `timeout` passes. Returns (bytes received, closed_by_peer)."""
    sock = connect(port, timeout)
    bs = _buffered(sock)
    try:
        try:
            sock.sendall(data)
            if shutdown:
                sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass
        closed = bs.wait_closed(timeout)
        return bytes(bs.buf), closed
    finally:
        bs.close()


def send_raw(port: int, data: bytes, timeout: float = 3.0) -> bytes:
    """Send `data`, return everything received until close or `timeout`."""
    return exchange(port, data, timeout)[0]


def parse_responses(data: bytes, methods=None) -> list[Response]:
    """Parse every complete response in `data` (e.g. from send_raw)."""

    class _Fake:
        def recv(self, n):
            return b""

        def settimeout(self, t):
            pass

    bs = BufferedSocket(_Fake())
    bs.buf += data
    out = []
    i = 0
    while bs.buf:
        method = methods[i] if methods and i < len(methods) else "GET"
        out.append(read_response(bs, method, timeout=1.0))
        i += 1
    return out


def is_refused(port: int, timeout: float = 1.0) -> bool:
    """True if a TCP connect to `port` is actively refused (or reset straight away)."""
    try:
        sock = connect(port, timeout)
    except ConnectionRefusedError:
        return True
    except OSError as e:
        return e.errno in (errno.ECONNREFUSED, errno.ECONNRESET)
    sock.close()
    return False


def readable(sock: socket.socket, timeout: float) -> bool:
    r, _, _ = select.select([sock], [], [], timeout)
    return bool(r)


# ---------------------------------------------------------------------------------------
# Reading the echo backend's JSON


class Echoed:
    """The echo backend's view of one request, parsed from a response body."""

    def __init__(self, resp: Response):
        assert resp.status == 200, f"expected the echo backend's 200, got {resp!r}"
        self.data = resp.json()
        self.method = self.data["method"]
        self.target = self.data["target"]
        self.version = self.data["version"]
        self.headers = [(k, v) for k, v in self.data["headers"]]
        self.body_len = self.data["body_len"]
        self.body_sha256 = self.data["body_sha256"]
        self.body = (self.data["body"].encode("latin-1")
                     if self.data["body"] is not None else None)
        self.backend = self.data["backend"]
        self.framing = self.data["framing"]
        self.trailers = [(k, v) for k, v in self.data["trailers"]]

    def header_all(self, name: str) -> list[str]:
        name = name.lower()
        return [v for k, v in self.headers if k.lower() == name]

    def header(self, name: str) -> str | None:
        vals = self.header_all(name)
        return vals[0] if vals else None

    def names(self) -> set[str]:
        return {k.lower() for k, _ in self.headers}
