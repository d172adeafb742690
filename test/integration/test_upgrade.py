"""Upgrade (WebSocket-style): tunnelled only after a real 101."""

import time

from backends import refuse_upgrade, upgrade
from client import Client, Echoed

GREETING = b"hello from backend\n"
WS_HEADERS = [
    ("Upgrade", "websocket"),
    ("Connection", "Upgrade"),
    ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ("Sec-WebSocket-Version", "13"),
]


def _open_tunnel(port):
    c = Client(port)
    c.send_request("GET", "/chat", headers=WS_HEADERS)
    r = c.read_response()
    assert r.status == 101, r
    assert (r.header("upgrade") or "").lower() == "websocket", r.headers
    assert "upgrade" in r.connection_tokens(), r.headers
    assert r.header("sec-websocket-accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=", r.headers
    assert c.read_exact(len(GREETING), 3.0) == GREETING
    return c


def test_upgrade_request_reaches_backend(sluice, make_backend):
    """The upgrade request reaches the backend with Upgrade and `Connection: upgrade`
    intact (the one case where those hop-by-hop fields are forwarded)."""
    b = make_backend(upgrade())
    sluice.start([b])
    c = _open_tunnel(sluice.port)
    c.close()
    req = b.requests[0]
    assert (req.header("upgrade") or "").lower() == "websocket", req.headers
    assert "upgrade" in req.connection_tokens(), req.headers
    assert req.header("sec-websocket-key") == "dGhlIHNhbXBsZSBub25jZQ=="


def test_upgrade_tunnels_both_ways_client_closes(sluice, make_backend):
    """After the 101, bytes flow both ways unchanged (a greeting that came in the same
    write as the 101, then several messages each way, including non-HTTP binary), and a
    close from the client ends the tunnel on both sides."""
    b = make_backend(upgrade())
    sluice.start([b])
    c = _open_tunnel(sluice.port)
    try:
        messages = [b"message one", b"\x81\x05hello", b"\x00\xff binary \r\n\r\n",
                    b"GET / HTTP/1.1\r\nHost: not-a-request\r\n\r\n"]
        for m in messages:
            c.send(m)
            assert c.read_exact(5 + len(m), 3.0) == b"echo:" + m
        big = bytes(range(256)) * 80  # 20 KiB in one write: arrives in pieces, maybe
        c.send(big)
        assert b.wait_for(lambda: bytes(b.tunnel_bytes) == b"".join(messages) + big, 3.0), \
            f"backend got {len(b.tunnel_bytes)} tunnel bytes"
        echoed = bytearray()
        deadline = time.monotonic() + 3.0
        while echoed.replace(b"echo:", b"") != big and time.monotonic() < deadline:
            echoed += c.read_some(0.5)
        assert len(echoed.replace(b"echo:", b"")) >= len(big)
        c.shutdown_write()
        assert c.wait_closed(3.0), "tunnel not closed after the client closed its side"
    finally:
        c.close()
    assert b.wait_for(lambda: b.closed_connections >= 1, 3.0), \
        "the backend side of the tunnel stayed open"
    assert len(b.requests) == 1, "tunnel bytes were parsed as HTTP requests"


def test_upgrade_tunnel_backend_closes(sluice, make_backend):
    """A close from the backend side of a tunnel reaches the client: its last bytes
    arrive, then EOF."""
    b = make_backend(upgrade())
    sluice.start([b])
    c = _open_tunnel(sluice.port)
    try:
        for i in range(5):
            m = b"ping %d" % i
            c.send(m)
            assert c.read_exact(5 + len(m), 3.0) == b"echo:" + m
        c.send(b"please-close")
        assert c.read_exact(4, 3.0) == b"bye\n"
        assert c.wait_closed(3.0), "client side still open after the backend closed"
    finally:
        c.close()


def test_upgrade_refused_no_tunnel(sluice, make_backend):
    """The backend answers an upgrade request with a plain 200: the client gets that
    response and no tunnel. Bytes sent afterwards are HTTP again (the next request is
    answered normally) or the connection is closed; raw bytes never reach the backend."""
    b = make_backend(refuse_upgrade())
    sluice.start([b])
    with Client(sluice.port) as c:
        c.send_request("GET", "/chat", headers=WS_HEADERS)
        r = c.read_response()
        assert r.status == 200 and r.body == b"upgrade refused\n", r
        assert (r.header("upgrade") is None), r.headers
        try:
            c.send_request("GET", "/after")
            r2 = c.read_response(timeout=3.0)
        except (ConnectionError, OSError):
            r2 = None
        if r2 is not None:
            assert Echoed(r2).target == "/after"
    assert b.upgrades == 0
    assert b.tunnel_bytes == b""
    assert [q.target for q in b.requests] in (["/chat"], ["/chat", "/after"])
    assert b.errors == []


def test_upgrade_refused_then_raw_bytes_not_tunnelled(sluice, make_backend):
    """After a refused upgrade, non-HTTP bytes from the client are treated as a (bad)
    request, not tunnelled: they never reach the backend."""
    b = make_backend(refuse_upgrade())
    sluice.start([b])
    with Client(sluice.port) as c:
        c.send_request("GET", "/chat", headers=WS_HEADERS)
        r = c.read_response()
        assert r.status == 200
        try:
            c.send(b"\x81\x05hello raw websocket frame\r\n\r\n")
        except OSError:
            pass
        c.wait_closed(2.0)
    time.sleep(0.05)
    assert b"raw websocket frame" not in b"".join(bytes(s) for s in b.raw_streams)
    assert [q.target for q in b.requests] == ["/chat"]


def test_request_without_connection_upgrade_is_not_upgraded(sluice, make_backend):
    """`Upgrade: websocket` without the `upgrade` connection option is not an upgrade
    request: Upgrade is stripped as hop-by-hop and the request is served normally."""
    b = make_backend(upgrade())
    sluice.start([b])
    with Client(sluice.port) as c:
        r = c.request("GET", "/plain", headers=[("Upgrade", "websocket")])
        e = Echoed(r)
        assert e.target == "/plain"
        assert e.header("upgrade") is None, e.headers
    assert b.upgrades == 0


def test_h2c_upgrade_is_forwarded_as_a_plain_request(sluice, make_backend):
    """`Upgrade: h2c` is never offered to the backend (h2c smuggling: a tunnel of cleartext
    HTTP/2 would bypass the proxy): the request arrives without Upgrade or HTTP2-Settings,
    and even a backend willing to upgrade answers it as a normal request."""
    b = make_backend(upgrade())
    sluice.start([b])
    with Client(sluice.port) as c:
        c.send_request("GET", "/h2c", headers=[
            ("Connection", "Upgrade, HTTP2-Settings"),
            ("Upgrade", "h2c"),
            ("HTTP2-Settings", "AAMAAABkAARAAAAAAAIAAAAA"),
        ])
        r = c.read_response()
    assert r.status != 101, r
    req = b.requests[0]
    assert req.header("upgrade") is None, req.headers
    assert req.header("http2-settings") is None, req.headers
    assert "upgrade" not in req.connection_tokens(), req.headers


def test_tunnel_has_its_own_idle_timeout(sluice, make_backend):
    """An upgraded connection lives by --tunnel-idle-timeout, not the keep-alive idle timeout:
    with the client idle timeout at 300 ms and the tunnel's at 1.5 s, a tunnel quiet for 700 ms
    still works, and one quiet for longer than 1.5 s is closed."""
    b = make_backend(upgrade())
    sluice.start([b], args=["--client-idle-timeout", "300ms", "--tunnel-idle-timeout", "1500ms"])
    c = _open_tunnel(sluice.port)
    try:
        time.sleep(0.7)
        c.send(b"still here")
        assert c.read_exact(5 + 10, 3.0) == b"echo:still here"
        started = time.monotonic()
        assert c.wait_closed(5.0), "the idle tunnel was not closed"
        assert time.monotonic() - started >= 1.2
    finally:
        c.close()


def test_tunnel_log_line_is_written_at_its_end_with_bytes_both_ways(sluice, make_backend, tmp_path):
    """The access-log line of an upgrade is written when the tunnel closes: its duration is the
    tunnel's life and its byte counts include what went through it, each way."""
    import json
    b = make_backend(upgrade())
    path = tmp_path / "access.log"
    sluice.start([b], args=["--access-log", str(path), "--access-log-format", "json"])
    c = _open_tunnel(sluice.port)
    payload = b"p" * 5000
    c.send(payload)
    echoed = b""
    deadline = time.monotonic() + 3.0
    while len(echoed) < 5 + len(payload) and time.monotonic() < deadline:
        echoed += c.read_some(1.0)
    time.sleep(0.3)
    c.close()
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline and not (path.exists() and path.read_text().strip()):
        time.sleep(0.05)
    [entry] = [json.loads(line) for line in path.read_text().splitlines()]
    assert entry["status"] == 101 and entry["method"] == "GET" and entry["target"] == "/chat"
    assert entry["bytes"] >= len(GREETING) + len(payload), entry
    assert entry["request_bytes"] >= len(payload), entry
    assert entry["duration_s"] >= 0.3, entry
