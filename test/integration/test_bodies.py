"""Request and response bodies: every framing, streamed both ways, byte-exact."""

import hashlib
import os
import random
import time

import pytest

from backends import (chunked, close_delimited, expect_100, fixed, large, large_body, route,
                      slow_body)
from client import Client, Deadline, Echoed, build_request, chunk_body, exchange, request


def test_post_small_content_length_body(sluice, backend):
    """A small Content-Length body reaches the backend byte-exact."""
    sluice.start([backend])
    body = b"name=sluice&bytes=\x00\x01\xfe\xff&end"
    with Client(sluice.port) as c:
        e = Echoed(c.request("POST", "/form", body=body,
                             headers=[("Content-Type", "application/octet-stream")]))
    assert e.body == body
    assert backend.requests[0].body == body


def test_post_empty_body(sluice, backend):
    """`Content-Length: 0` POST works and the connection stays usable."""
    sluice.start([backend])
    with Client(sluice.port) as c:
        e = Echoed(c.request("POST", "/empty", body=b""))
        assert e.body == b"" and e.method == "POST"
        assert Echoed(c.request("GET", "/next")).target == "/next"


@pytest.mark.time_limit(60)
def test_post_5mib_content_length_body(sluice, backend):
    """A 5 MiB Content-Length body reaches the backend byte-exact (sha256 compared)."""
    sluice.start([backend])
    body = os.urandom(5 << 20)
    with Client(sluice.port, timeout=20) as c:
        e = Echoed(c.request("POST", "/upload", body=body, timeout=20))
    assert e.body_len == len(body)
    assert e.body_sha256 == hashlib.sha256(body).hexdigest()
    assert backend.requests[0].body == body


def test_chunked_request_body_many_chunks(sluice, backend):
    """A chunked request body with many chunks of odd sizes, chunk extensions, an
    upper-case and zero-padded size and trailers reaches the backend decoded and intact
    (sluice may re-frame it; the bytes must be the same)."""
    sluice.start([backend])
    rnd = random.Random(1234)
    parts = [bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 3000))) for _ in range(150)]
    extensions = [";ext=1", ';name="quoted value"', ";a;b=c", ""] * 40
    body = bytearray(chunk_body(parts, extensions, trailers=[("X-Trailer", "yes")]))
    # Also a zero-padded, upper-case chunk size: 000A == 10 bytes.
    body = b"000A\r\n0123456789\r\n" + bytes(body)
    expected = b"0123456789" + b"".join(parts)
    with Client(sluice.port, timeout=10) as c:
        e = Echoed(c.request("POST", "/chunks", headers=[("Transfer-Encoding", "chunked")],
                             body=body))
        assert e.body_len == len(expected)
        assert e.body_sha256 == hashlib.sha256(expected).hexdigest()
        assert Echoed(c.request("GET", "/after")).target == "/after"
    assert backend.requests[0].body == expected


def test_chunked_request_body_sent_slowly(sluice, backend):
    """A chunked body that trickles in (chunks split across writes, mid-size-line too)
    arrives intact."""
    sluice.start([backend])
    head = build_request("POST", "/slow", headers=[("Transfer-Encoding", "chunked")])
    wire = chunk_body([b"alpha-", b"beta-", b"gamma"], trailers=[])
    with Client(sluice.port) as c:
        c.send(head)
        for i in range(0, len(wire), 3):
            c.send(wire[i:i + 3])
            time.sleep(0.01)
        e = Echoed(c.read_response())
    assert e.body == b"alpha-beta-gamma"


def test_chunked_response_relayed(sluice, make_backend):
    """A chunked response whose chunks come with delays is relayed with the same body."""
    parts = [b"first chunk\n", b"x" * 5000, b"", b"\x00\xff binary \r\n", b"last\n"]
    b = make_backend(chunked(parts, delay=0.02, trailers=[("X-Sum", "1")]))
    sluice.start([b])
    with Client(sluice.port) as c:
        r = c.request("GET", "/stream")
        assert r.status == 200
        assert r.body == b"".join(parts)
        assert r.framing in ("chunked", "length")
        # and the connection is still fine
        r2 = c.request("GET", "/stream")
        assert r2.body == b"".join(parts)


def test_chunked_response_to_http10_client(sluice, make_backend):
    """An HTTP/1.0 client never gets Transfer-Encoding (RFC 9112 6.1): a chunked upstream
    response reaches it decoded (close-delimited or with Content-Length)."""
    parts = [b"one ", b"two ", b"three"]
    b = make_backend(chunked(parts, delay=0.01))
    sluice.start([b])
    with Client(sluice.port) as c:
        c.send(b"GET /old HTTP/1.0\r\nHost: sluice.test\r\n\r\n")
        r = c.read_response()
    assert r.status == 200
    assert not r.header("transfer-encoding"), r.headers
    assert r.body == b"one two three"


def test_close_delimited_response_relayed(sluice, make_backend):
    """A backend response framed by closing the connection is relayed byte-exact. If
    sluice relays it close-delimited, the client sees the body and then the close; if
    it re-frames it (chunked), the body must be the same."""
    body = bytes(range(256)) * 40
    b = make_backend(route({"/close": close_delimited(body)}))
    sluice.start([b])
    with Client(sluice.port) as c:
        r = c.request("GET", "/close")
        assert r.status == 200
        assert r.body == body
        if r.framing == "close":
            assert c.bsock.eof
        else:
            assert r.framing == "chunked", r
            assert Echoed(c.request("GET", "/next")).target == "/next"


def test_slow_response_body_relayed(sluice, make_backend):
    """A Content-Length body that trickles out of the backend arrives complete."""
    body = bytes(range(256)) * 16
    b = make_backend(slow_body(body, chunk=512, delay=0.03))
    sluice.start([b])
    with Client(sluice.port) as c:
        r = c.request("GET", "/slow")
    assert r.status == 200 and r.body == body


@pytest.mark.time_limit(60)
def test_large_response_to_slow_reader_backpressure(sluice, make_backend):
    """A 20 MiB response to a client that pauses reading: while the client is paused the
    backend cannot finish sending (sluice applies backpressure instead of buffering the
    body), and after resuming the client receives every byte, within a time bound."""
    n = 20 << 20
    b = make_backend(large(n, chunk=65536), sndbuf=65536)
    sluice.start([b])
    started = time.monotonic()
    with Client(sluice.port, timeout=10, rcvbuf=65536) as c:
        c.send_request("GET", "/large")
        bs = c.bsock
        head = bs.read_until(b"\r\n\r\n", Deadline(5))
        assert head.startswith(b"HTTP/1.1 200"), head
        received = bytearray(bs.buf)
        bs.buf.clear()
        # Read the first MiB, then stop reading.
        while len(received) < (1 << 20):
            received += c.sock.recv(65536)
        # Wait until the backend is stuck (no progress for 0.3 s) or 4 s pass.
        last, stuck_since, deadline = -1, None, Deadline(4.0)
        while not deadline.expired():
            now_sent = b.bytes_sent
            if now_sent == last:
                stuck_since = stuck_since or time.monotonic()
                if time.monotonic() - stuck_since >= 0.3:
                    break
            else:
                last, stuck_since = now_sent, None
            time.sleep(0.05)
        sent_while_paused = b.bytes_sent
        print(f"backend had sent {sent_while_paused} of {n} bytes while the client was "
              f"paused at {len(received)}")
        assert sent_while_paused < n, \
            "the backend finished sending 20 MiB while the client read only 1 MiB"
        # Resume, reading at a steady pace.
        deadline = Deadline(30.0)
        c.sock.settimeout(5)
        while len(received) < n:
            deadline.check("reading the 20 MiB body")
            data = c.sock.recv(262144)
            assert data, f"connection closed after {len(received)} of {n} body bytes"
            received += data
    assert len(received) == n
    assert hashlib.sha256(received).digest() == hashlib.sha256(large_body(n)).digest()
    print(f"20 MiB relayed in {time.monotonic() - started:.2f}s")


def test_expect_100_continue_client_waits(sluice, make_backend):
    """`Expect: 100-continue` with a client that sends the body only after `100 Continue`:
    the 100 arrives (from sluice or relayed from the backend), then the final 200 with the
    body intact; no deadlock."""
    b = make_backend(expect_100())
    sluice.start([b])
    body = b"the body after 100-continue" * 100
    with Client(sluice.port) as c:
        c.send(build_request("POST", "/expect", headers=[
            ("Expect", "100-continue"), ("Content-Length", str(len(body)))]))
        interim = c.read_response(skip_interim=False, timeout=3.0)
        assert interim.status == 100, f"expected 100 Continue first, got {interim!r}"
        c.send(body)
        r = c.read_response()
        assert Echoed(r).body == body
        assert Echoed(c.request("GET", "/after")).target == "/after"


def test_expect_100_continue_client_does_not_wait(sluice, make_backend):
    """`Expect: 100-continue` with the body sent straight away: any interim 100 is
    well-formed and the final 200 carries the body intact."""
    b = make_backend(expect_100())
    sluice.start([b])
    body = b"eager body"
    with Client(sluice.port) as c:
        r = c.request("PUT", "/expect", headers=[("Expect", "100-continue")], body=body)
        assert all(i.status == 100 for i in r.interim), r.interim
        assert Echoed(r).body == body
        assert Echoed(c.request("GET", "/after")).target == "/after"


def test_response_body_of_every_size_boundary(sluice, make_backend):
    """Response bodies around common buffer sizes (4 KiB, 16 KiB, 64 KiB +-1) arrive
    exact, proving no off-by-one at buffer edges."""
    sizes = [0, 1, 4095, 4096, 4097, 16383, 16384, 16385, 65535, 65536, 65537]
    mapping = {f"/size/{n}/": _fixed_body(n) for n in sizes}
    b = make_backend(route(mapping))
    sluice.start([b])
    with Client(sluice.port) as c:
        for n in sizes:
            r = c.request("GET", f"/size/{n}/")
            assert r.status == 200 and r.body == large_body(n), f"size {n}: got {len(r.body)}"


def _fixed_body(n):
    return fixed(200, [("Content-Type", "application/octet-stream")], large_body(n))


def test_request_body_limit_refuses_a_declared_length_before_sending(sluice, backend):
    """--request-body-max: a Content-Length over it is a 413 and nothing reaches the backend;
    one at the limit passes."""
    from client import request as plain_request
    sluice.start([backend], args=["--request-body-max", "1KiB"])
    assert plain_request(sluice.port, "POST", "/ok", body=b"a" * 1024).status == 200
    r = plain_request(sluice.port, "POST", "/big", body=b"a" * 1025)
    assert r.status == 413, r
    assert backend.targets() == ["/ok"]


def test_request_body_limit_cuts_a_chunked_body_that_passes_it(sluice, backend):
    """A chunked body has no declared length: it is refused (413) when its chunks pass the
    limit, and the backend never receives a complete request."""
    from client import chunk_body
    sluice.start([backend], args=["--request-body-max", "100"])
    with Client(sluice.port) as c:
        c.send(b"POST /chunks HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n" +
               chunk_body([b"x" * 60, b"y" * 60]))
        r = c.read_response()
    assert r.status == 413, r
    assert all(q.target != "/chunks" or q.framing != "chunked" or len(q.body) < 100
               for q in backend.requests)


def test_request_body_limit_per_route(sluice, backend, tmp_path):
    """A route may set its own limit: uploads up to 1 MiB, 1 KiB elsewhere."""
    from client import request as plain_request
    path = tmp_path / "limits.zon"
    path.write_text(f""".{{
    .listen = "127.0.0.1:0",
    .limits = .{{ .request_body_max = "1KiB" }},
    .pools = .{{ .app = .{{ .backends = .{{"{backend.address}"}} }} }},
    .routes = .{{
        .{{ .path_prefix = "/upload/", .request_body_max = "1MiB", .pool = "app" }},
        .{{ .pool = "app" }},
    }},
}}
""")
    sluice.start_config(path)
    assert plain_request(sluice.port, "POST", "/upload/a", body=b"u" * 100_000).status == 200
    assert plain_request(sluice.port, "POST", "/other", body=b"o" * 2000).status == 413


def test_a_chunked_body_broken_from_its_first_bytes_reaches_no_backend(sluice, backend):
    """A chunked body that arrives with its head and is already malformed gets its 400 before
    anything is sent to a backend, as nginx and HAProxy answer it. (One that breaks later,
    after its head went upstream, closes that backend connection: the smuggling oracle's
    issue19 cases check both.)"""
    sluice.start([backend])
    data, closed = exchange(sluice.port, b"POST /broken HTTP/1.1\r\nHost: x\r\n"
                            b"Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n")
    assert data.startswith(b"HTTP/1.1 400"), data
    assert closed
    assert backend.connections == 0 and "/broken" not in backend.targets()
    assert request(sluice.port, "GET", "/after").status == 200
