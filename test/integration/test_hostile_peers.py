"""What an attacking client or a hostile backend could make sluice forward, one test per finding
of the attack probe (issue 9), each on both I/O backends.

The rule under test: the framing of a forwarded message is the one sluice parsed, written by
sluice; fields sluice owns are never dropped on the sender's word; a rewrite never writes past
its buffer; and nothing of one client's exchange reaches another.
"""

import json
import re
import socket
import threading
import time

import pytest

from backends import chunked, echo, raw_response, route
from client import Client, Deadline, Echoed, connect, parse_responses, read_response, request

SMUGGLED = b"GET /attacker-controlled HTTP/1.1\r\nHost: x\r\nX-Captured: "


def raw_exchange(port, data: bytes, timeout=3.0) -> bytes:
    """Sends `data`, half-closes, and returns everything sluice answered."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        out = b""
        deadline = Deadline(timeout)
        while not deadline.expired():
            chunk = s.recv(65536)
            if not chunk:
                break
            out += chunk
        return out


# ---------------------------------------------------------------------------------------
# 1 and 2: Connection cannot remove the length


@pytest.mark.parametrize("connection", [
    "Content-Length", "content-length", "close, Content-Length", "Content-Length ,x",
])
def test_connection_naming_content_length_cannot_smuggle_a_request(sluice, backend, connection):
    """The probe's request: the body is a request for /attacker-controlled, and Connection
    names Content-Length. The backend must read it as this request's body, and the next
    client's request must be answered as its own."""
    sluice.start([backend])
    attack = (b"POST /a HTTP/1.1\r\nHost: example.com\r\nConnection: " + connection.encode() +
              b"\r\nContent-Length: %d\r\n\r\n" % len(SMUGGLED) + SMUGGLED)
    with Client(sluice.port) as attacker:
        attacker.send(attack)
        first = attacker.read_response()
        assert Echoed(first).target == "/a"
    victim = request(sluice.port, "GET", "/victim", headers=[("Cookie", "session=secret")])
    assert Echoed(victim).target == "/victim", victim
    targets = backend.targets()
    assert targets == ["/a", "/victim"], targets
    post = backend.requests[0]
    assert post.framing == "length" and post.body == SMUGGLED
    assert post.header("content-length") == str(len(SMUGGLED))
    assert "session=secret" not in post.raw.decode("latin-1")


def test_connection_naming_owned_fields_keeps_them(sluice, backend):
    """Host, Transfer-Encoding, X-Forwarded-For and Upgrade named in Connection are still
    sluice's: written from its own parse, not dropped."""
    sluice.start([backend])
    with Client(sluice.port) as c:
        c.send(b"POST /c HTTP/1.1\r\nHost: h.example\r\nConnection: host, transfer-encoding, "
               b"x-forwarded-for, x-forwarded-proto\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"5\r\nhello\r\n0\r\n\r\n")
        r = c.read_response()
    e = Echoed(r)
    assert e.target == "/c"
    received = backend.requests[0]
    assert received.header("host") == "h.example"
    assert received.framing == "chunked" and received.body == b"hello"
    assert received.header("x-forwarded-for") == "127.0.0.1"
    assert received.header("x-forwarded-proto") == "http"


def test_response_connection_naming_content_length_keeps_the_length(sluice, make_backend):
    """A backend answering `Connection: Content-Length` must not make the client read the
    response as close-delimited on a connection sluice keeps open."""
    bad = make_backend(raw_response(b"HTTP/1.1 200 OK\r\nConnection: Content-Length\r\n"
                                    b"Content-Length: 5\r\n\r\nhello", close=False))
    sluice.start([bad])
    with Client(sluice.port) as c:
        for _ in range(3):
            r = c.request("GET", "/r")
            assert r.status == 200 and r.body == b"hello" and r.header("content-length") == "5", r


# ---------------------------------------------------------------------------------------
# 3: the response rewrite never writes past its buffer


def tight_fields(count: int, body: bytes, name="A") -> bytes:
    """A response whose `count` fields are written `NameN:N`, each growing by a byte."""
    fields = b"".join(b"%s%d:%d\r\n" % (name.encode(), i, i) for i in range(count))
    return b"HTTP/1.1 200\r\n" + fields + b"Content-Length: %d\r\n\r\n" % len(body) + body


def check_tight_response(r, count: int, body: bytes):
    assert r.status == 200 and r.body == body, r
    for i in (0, count // 2, count - 1):
        assert r.header(f"A{i}") == str(i), r


def test_sticky_cookie_and_many_tight_fields_keep_the_body(sluice, make_backend):
    """With `--strategy sticky`, 100 `Name:value` fields and a 60-byte body: the probe saw the
    body replaced by `HttpOnly...`. The head grows past the headroom; the body must move."""
    body = bytes(range(65, 65 + 60))
    b = make_backend(raw_response(tight_fields(100, body), close=False))
    sluice.start([b], args=["--strategy", "sticky"])
    r = request(sluice.port, "GET", "/s")
    check_tight_response(r, 100, body)
    assert "sluice_backend=" in (r.header("set-cookie") or ""), r


def test_many_tight_fields_keep_their_framing(sluice, make_backend):
    """160 `Name:value` fields (the probe used --headers-count-max 400): the head kept its
    length and no bare LF reached the client."""
    body = b"x" * 10
    b = make_backend(raw_response(tight_fields(160, body), close=False))
    sluice.start([b], args=["--response-headers-count-max", "400"])
    with Client(sluice.port) as c:
        for _ in range(2):
            r = c.request("GET", "/t")
            check_tight_response(r, 160, body)


@pytest.mark.time_limit(60)
def test_a_huge_rewrite_never_touches_another_connections_buffer(sluice, make_backend):
    """The probe's cross-connection corruption: a head of ~19 KiB in 1,000+ tight fields with a
    sticky cookie ran past its buffer into another client's half-received request. Now the
    rewrite either fits (the body moved) or is a 502, and the other request arrives intact."""
    count = 1000
    big = tight_fields(count, b"BODY", name="B")
    assert len(big) < 19 * 1024
    b = make_backend(route({"/big": raw_response(big, close=False)}))
    sluice.start([b], args=["--header-bytes-max", "19456", "--response-header-bytes-max", "19456",
                            "--response-headers-count-max", "1024", "--strategy", "sticky",
                            "--workers", "1"])
    other = connect(sluice.port)
    half = b"POST /other HTTP/1.1\r\nHost: h\r\nContent-Length: 16\r\nX-Fill: " + b"f" * 8000
    other.sendall(half)
    for _ in range(5):
        r = request(sluice.port, "GET", "/big")
        if r.status == 200:
            assert r.body == b"BODY" and r.header(f"B{count - 1}") == str(count - 1), r
        else:
            assert r.status == 502, r
    other.sendall(b"\r\n\r\n0123456789abcdef")
    r = read_response(other)
    other.close()
    e = Echoed(r)
    assert e.target == "/other" and e.body == b"0123456789abcdef", e
    received = [q for q in b.requests if q.target == "/other"]
    assert len(received) == 1 and received[0].header("x-fill") == "f" * 8000
    assert received[0].body == b"0123456789abcdef"


def test_a_response_head_over_the_limits_is_a_logged_502(sluice, make_backend):
    """A head over --response-header-bytes-max (or its field count) is a 502 with a line that
    names the limit; within the defaults, 100 Set-Cookie lines pass."""
    cookies = b"".join(b"Set-Cookie: c%d=%s\r\n" % (i, b"v" * 40) for i in range(100))
    many = make_backend(route({
        "/cookies": raw_response(b"HTTP/1.1 200 OK\r\n" + cookies + b"Content-Length: 2\r\n\r\nok",
                                 close=False),
        "/huge": raw_response(b"HTTP/1.1 200 OK\r\nX-Big: " + b"b" * 40000 +
                              b"\r\nContent-Length: 2\r\n\r\nok", close=False),
    }))
    sluice.start([many])
    r = request(sluice.port, "GET", "/cookies")
    assert r.status == 200 and len(r.header_all("set-cookie")) == 100, r
    r = request(sluice.port, "GET", "/huge")
    assert r.status == 502, r
    sluice.wait_for_line(re.compile(r"sluice: warn: 502 upstream_head_too_large: pool default, "
                                    r"backend \S+, tries 1: "), 5.0)


# ---------------------------------------------------------------------------------------
# 5: weaker spots


@pytest.mark.parametrize("head", [
    b"HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n",
    b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n",
])
def test_no_framing_fields_on_204(sluice, make_backend, head):
    """RFC 9112 §6.1 and RFC 9110 §8.6: a 204 carries neither Transfer-Encoding nor
    Content-Length; what the backend sent is not passed on."""
    b = make_backend(raw_response(head, close=False))
    sluice.start([b])
    with Client(sluice.port) as c:
        for _ in range(2):
            r = c.request("GET", "/n")
            assert r.status == 204, r
            assert r.header("transfer-encoding") is None and r.header("content-length") is None, r


def test_no_framing_fields_on_100_continue(sluice, make_backend):
    """A 100 Continue with Transfer-Encoding reaches the client without it."""
    b = make_backend(raw_response(b"HTTP/1.1 100 Continue\r\nTransfer-Encoding: chunked\r\n\r\n"
                                  b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", close=False))
    sluice.start([b])
    data = raw_exchange(sluice.port, b"POST /e HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n"
                                     b"Content-Length: 2\r\nConnection: close\r\n\r\nhi")
    interim, final = data.split(b"\r\n\r\n", 1)
    assert interim.startswith(b"HTTP/1.1 100") and b"transfer-encoding" not in interim.lower()
    assert final.startswith(b"HTTP/1.1 200") and final.endswith(b"ok")


def test_underscore_fields_are_dropped_and_counted(sluice, backend):
    """`X_Forwarded_For` would reach a WSGI app as HTTP_X_FORWARDED_FOR: dropped by default,
    with a warning line; `--header-underscores allow` keeps them."""
    sluice.start([backend])
    r = request(sluice.port, "GET", "/u", headers=[("X_Forwarded_For", "6.6.6.6"), ("My_Field", "1")])
    e = Echoed(r)
    assert e.header("x_forwarded_for") is None and e.header("my_field") is None, e
    assert e.header("x-forwarded-for") == "127.0.0.1"
    sluice.wait_for_line(re.compile(r"sluice: warn: dropped 2 request field\(s\) with '_'"), 5.0)


def test_underscore_fields_can_be_allowed(sluice, backend):
    sluice.start([backend], args=["--header-underscores", "allow"])
    e = Echoed(request(sluice.port, "GET", "/u", headers=[("My_Field", "1")]))
    assert e.header("my_field") == "1"


def test_untrusted_forwarded_and_x_real_ip_are_dropped(sluice, backend):
    """Forwarded and X-Real-IP from a client that is not a trusted proxy are claims sluice
    cannot check: the app never sees them."""
    sluice.start([backend])
    e = Echoed(request(sluice.port, "GET", "/f", headers=[("Forwarded", "for=6.6.6.6"),
                                                          ("X-Real-IP", "6.6.6.6")]))
    assert e.header("forwarded") is None and e.header("x-real-ip") is None, e


def test_trusted_forwarded_chain_is_kept_and_appended(sluice, backend):
    sluice.start([backend], args=["--trusted-proxy", "127.0.0.1/32"])
    e = Echoed(request(sluice.port, "GET", "/f", headers=[("Forwarded", "for=1.1.1.1"),
                                                          ("X-Real-IP", "1.1.1.1")]))
    assert e.header_all("forwarded") == ["for=1.1.1.1", "for=127.0.0.1"], e
    assert e.header("x-real-ip") == "1.1.1.1"


def test_request_trailers_are_not_forwarded(sluice, backend):
    """Trailer fields (here X-Forwarded-For and Authorization) never reach the backend: the
    trailer section is forwarded as its final CRLF only."""
    sluice.start([backend])
    with Client(sluice.port) as c:
        c.send(b"POST /t HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"5\r\nhello\r\n0\r\nX-Forwarded-For: 6.6.6.6\r\nAuthorization: x\r\n\r\n")
        r = c.read_response()
        assert Echoed(r).body == b"hello"
        assert c.request("GET", "/after").status == 200  # The connection stays in step.
    received = backend.requests[0]
    assert received.body == b"hello" and received.trailers == [], received
    assert b"6.6.6.6" not in received.raw


def test_response_trailers_are_not_forwarded(sluice, make_backend):
    b = make_backend(raw_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                  b"2\r\nok\r\n0\r\nSet-Cookie: evil=1\r\nX-Sig: 2\r\n\r\n", close=False))
    sluice.start([b])
    data = raw_exchange(sluice.port, b"GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
    assert data.endswith(b"\r\n\r\n2\r\nok\r\n0\r\n\r\n"), data
    assert b"evil" not in data


def test_trailers_reach_an_http11_client_that_asked_for_them(sluice, make_backend):
    """The same relay for HTTP/1.1: with `TE: trailers` the section passes as the backend sent
    it (the decoder checked every line); without, only its final CRLF (above)."""
    b = make_backend(chunked([b"ok"], trailers=[("Grpc-Status", "0"), ("X-Checksum", "abc")]))
    sluice.start([b])
    data = raw_exchange(sluice.port, b"GET / HTTP/1.1\r\nHost: h\r\nTE: trailers\r\nConnection: close\r\n\r\n")
    assert data.endswith(b"\r\n\r\n2\r\nok\r\n0\r\nGrpc-Status: 0\r\nX-Checksum: abc\r\n\r\n"), data
    data = raw_exchange(sluice.port, b"GET / HTTP/1.0\r\nHost: h\r\nTE: trailers\r\n\r\n")
    assert data.endswith(b"\r\n\r\nok") and b"abc" not in data, data


@pytest.mark.parametrize("raw", [
    b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9223372036854775808\r\n\r\n",
    b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 18446744073709551615\r\n\r\n",
    b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n8000000000000000\r\n",
    b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n",
])
def test_lengths_above_2_63_are_refused(sluice, backend, raw):
    """A length a backend would hold in a signed 64-bit integer as negative is a 400."""
    sluice.start([backend])
    data = raw_exchange(sluice.port, raw)
    assert data.startswith(b"HTTP/1.1 400"), data
    if b"Content-Length" in raw:
        assert backend.requests == []


def test_absolute_form_authority_has_the_host_limit(sluice, backend):
    """The authority of an absolute-form target becomes Host and X-Forwarded-Host: it has the
    same 300-byte limit as a Host field."""
    sluice.start([backend])
    long_host = "a" * 300 + ".example"  # 308 bytes: under the target limit, over the host one.
    data = raw_exchange(sluice.port, f"GET http://{long_host}/ HTTP/1.1\r\nHost: h\r\n\r\n".encode())
    assert data.startswith(b"HTTP/1.1 400"), data
    assert backend.requests == []


ROUTES_ZON = """.{
    .listen = "127.0.0.1:0",
    .pools = .{ .app = .{ .backends = .{"%s"} } },
    .routes = .{
        .{ .path_prefix = "/admin", .respond = .{ .status = 403, .body = "no\\n" } },
        .{ .pool = "app" },
    },
}
"""


@pytest.mark.parametrize("target", ["/admin", "/%61dmin", "//admin", "/./admin", "/x/../admin",
                                    "/%2e/admin", "/admin/"])
def test_routes_match_the_normalised_path(sluice, backend, tmp_path, target):
    """A route that answers 403 for /admin cannot be passed by another spelling of /admin."""
    path = tmp_path / "routes.zon"
    path.write_text(ROUTES_ZON % backend.address)
    sluice.start_config(path)
    r = request(sluice.port, "GET", target)
    assert r.status == 403, (target, r)
    assert backend.requests == []
    assert request(sluice.port, "GET", "/adminx/../public").status == 200


def test_the_target_is_forwarded_as_sent(sluice, backend):
    sluice.start([backend])
    e = Echoed(request(sluice.port, "GET", "/a/%62/../c//d?x=%2F"))
    assert e.target == "/a/%62/../c//d?x=%2F"


# ---------------------------------------------------------------------------------------
# 4: a body in a later read


def test_a_body_sent_after_its_head_is_still_replayable(sluice, make_backend):
    """The probe's 43-byte PUT, head and body in two writes: the first backend resets it, and
    the retry on the second backend carries the whole body (a 502 before the fix)."""
    resetting = make_backend(raw_response(b"", close=True, delay=0), name="resetting")
    good = make_backend(echo(), name="good")
    sluice.start([resetting, good], args=["--eject-after", "0"])
    body = b"x" * 43
    for i in range(4):
        with socket.create_connection(("127.0.0.1", sluice.port), timeout=5) as s:
            s.sendall(f"PUT /p/{i} HTTP/1.1\r\nHost: h\r\nContent-Length: 43\r\n"
                      "Connection: close\r\n\r\n".encode())
            time.sleep(0.05)
            s.sendall(body)
            [r] = parse_responses(b"".join(iter(lambda: s.recv(65536), b"")))
        e = Echoed(r)
        assert e.body == body, e
