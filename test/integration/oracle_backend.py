"""The smuggling oracle's backend: records the exact bytes of every connection, frames
them with the strict parser (strict_http.py, not backends.py's), and answers each request
with the raw response the test scripted for it.

Requests are matched to scripts by the id in their target (`/o/<rid>...`): a request the
oracle never scripted (a smuggled one) gets an `UNSCRIPTED` response and is recorded, so
the client that receives it and the oracle both see it. A connection whose bytes stop
parsing is recorded with the error and closed without a response.

Keep-alive and pipelining: requests are answered in order as each completes; the
connection closes after a response the script marks as closing, after an HTTP/1.0 request
without `keep-alive`, or when sluice closes it.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from dataclasses import dataclass, field

from strict_http import HttpError, Message, parse_request

RID_RE = re.compile(r"/o/([A-Za-z0-9_.-]+)")
RECV_POLL = 0.25


def rid_of(target: str) -> str | None:
    m = RID_RE.search(target)
    return m.group(1) if m else None


@dataclass
class Script:
    """What the backend sends for one request id: raw bytes per request method (HEAD gets
    the head alone), and whether the backend closes the connection afterwards."""
    render: object  # callable(method: str) -> bytes
    closes: bool = False


@dataclass
class Received:
    backend: str
    conn: int
    seq: int
    msg: Message
    rid: str | None
    scripted: bool
    sent: bytes = b""  # the response bytes the backend wrote for it
    at: float = 0.0


@dataclass
class ConnRecord:
    backend: str
    index: int
    pending: bytearray = field(default_factory=bytearray)  # bytes after the last request
    total: int = 0  # bytes received
    closed: bool = False
    closed_by: str = ""  # "peer" (sluice closed), "backend" (script or error)
    error: HttpError | None = None
    seq: int = 0

    def partial(self) -> bytes:
        return bytes(self.pending)


def unscripted_response(target: str) -> bytes:
    body = f"UNSCRIPTED {target[:200]}".encode("latin-1", "replace")
    return (b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n\r\n" + body)


class OracleBackend:
    _names = 0

    def __init__(self, scripts: dict, name: str | None = None):
        OracleBackend._names += 1
        self.name = name or f"ob{OracleBackend._names}"
        self.scripts = scripts  # rid -> Script; shared by the backends of one sluice
        self.lock = threading.Condition()
        self.received: list[Received] = []
        self.conns: list[ConnRecord] = []
        self.exceptions: list[str] = []
        self._stopping = threading.Event()
        self._socks: set[socket.socket] = set()
        self._threads: list[threading.Thread] = []
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(128)
        self._listener.settimeout(RECV_POLL)
        self.port = self._listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        t = threading.Thread(target=self._accept_loop, daemon=True, name=f"{self.name}-accept")
        t.start()
        self._accept_thread = t

    def __repr__(self):
        return f"OracleBackend({self.name} {self.address}, conns={len(self.conns)})"

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
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                rec = ConnRecord(self.name, len(self.conns))
                self.conns.append(rec)
                self._socks.add(sock)
                self.lock.notify_all()
            t = threading.Thread(target=self._serve, args=(sock, rec), daemon=True,
                                 name=f"{self.name}-conn{rec.index}")
            self._threads.append(t)
            t.start()

    def _send(self, sock: socket.socket, data: bytes):
        view = memoryview(data)
        while view:
            if self._stopping.is_set():
                raise OSError("stopping")
            try:
                n = sock.send(view)
            except socket.timeout:
                continue
            view = view[n:]

    def _serve(self, sock: socket.socket, rec: ConnRecord):
        try:
            self._serve_loop(sock, rec)
        except OSError:
            pass
        except Exception as e:  # a bug in the oracle itself: keep it visible
            with self.lock:
                self.exceptions.append(f"{self.name} conn {rec.index}: {type(e).__name__}: {e}")
        finally:
            with self.lock:
                if not rec.closed:
                    rec.closed = True
                    rec.closed_by = rec.closed_by or "backend"
                self._socks.discard(sock)
                self.lock.notify_all()
            try:
                sock.close()
            except OSError:
                pass

    def _serve_loop(self, sock: socket.socket, rec: ConnRecord):
        while not self._stopping.is_set():
            try:
                data = sock.recv(65536)
            except socket.timeout:
                continue
            if not data:
                with self.lock:
                    rec.closed = True
                    rec.closed_by = "peer"
                    self.lock.notify_all()
                return
            with self.lock:
                rec.pending += data
                rec.total += len(data)
                window = bytes(rec.pending)
                self.lock.notify_all()
            # Frame and answer every request completed by these bytes. Only this thread
            # takes bytes off `pending`, so `window` stays its prefix.
            pos = 0
            while pos < len(window):
                try:
                    msg = parse_request(window, pos)
                except HttpError as e:
                    with self.lock:
                        del rec.pending[:pos]
                        e.offset -= pos
                        rec.error = e
                        rec.closed_by = "backend"
                        self.lock.notify_all()
                    return  # close without answering: the stream cannot be framed
                if msg is None:
                    break
                pos = msg.end
                rid = rid_of(msg.target)
                script = self.scripts.get(rid) if rid else None
                if script is not None:
                    out = script.render(msg.method)
                else:
                    out = unscripted_response(msg.target)
                item = Received(self.name, rec.index, rec.seq, msg, rid, script is not None,
                                out, time.monotonic())
                with self.lock:
                    del rec.pending[:msg.end - msg.start]
                    rec.seq += 1
                    self.received.append(item)
                    self.lock.notify_all()
                self._send(sock, out)
                keep_alive = "keep-alive" in msg.connection_tokens()
                if (script is not None and script.closes) or \
                        (msg.version == "HTTP/1.0" and not keep_alive) or \
                        "close" in msg.connection_tokens():
                    with self.lock:
                        rec.closed_by = "backend"
                    return

    # -- queries --

    def mark(self):
        """A baseline for `since`: what has been received, and each connection's state."""
        with self.lock:
            return len(self.received), {c.index: self._state(c) for c in self.conns}

    @staticmethod
    def _state(c: ConnRecord):
        return (c.total, c.closed, c.error is not None)

    def since(self, mark) -> tuple[list[Received], list[ConnRecord]]:
        """Requests received since `mark`, and the connections that changed since (new,
        received bytes, closed or failed): those are the ones this case is judged on."""
        count, states = mark
        with self.lock:
            conns = [c for c in self.conns if states.get(c.index) != self._state(c)]
            return list(self.received[count:]), conns

    def settle(self, timeout: float) -> bool:
        """Wait (bounded) until every open connection has framed all it received."""
        end = time.monotonic() + timeout
        with self.lock:
            while True:
                busy = [c for c in self.conns if not c.closed and c.pending
                        and c.error is None]
                if not busy:
                    return True
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self.lock.wait(min(left, 0.02))

    def forget(self):
        """Drop what a judged case left: received requests and closed connections (a long
        run then holds only what one case needs)."""
        with self.lock:
            self.received.clear()
            self.conns = [c for c in self.conns if not c.closed]

    def stop(self, timeout: float = 2.0):
        if self._stopping.is_set():
            return
        self._stopping.set()
        for s in (self._listener,):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            try:
                s.close()
            except OSError:
                pass
        with self.lock:
            socks = list(self._socks)
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        end = time.monotonic() + timeout
        self._accept_thread.join(max(0.0, end - time.monotonic()))
        for t in list(self._threads):
            t.join(max(0.0, end - time.monotonic()))
