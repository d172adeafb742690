"""Basic proxying: what reaches the backend, what comes back, and how requests are spread."""

import collections
import json

import pytest

from backends import echo, fixed, raw_response, route
from client import Client, Echoed, build_request, connect, read_response, request, tokens
from test_access_log import file_lines, wait_for_lines
from test_admin import ADMIN_RE, scrape, status, value

HOP_BY_HOP_REQUEST = [
    ("Connection", "keep-alive, X-Foo"),
    ("Keep-Alive", "timeout=5, max=100"),
    ("Proxy-Connection", "keep-alive"),
    ("TE", "trailers"),
    ("Trailer", "X-Checksum"),
    ("Upgrade", "h2c"),
    ("Proxy-Authorization", "Basic dXNlcjpwYXNz"),
    ("X-Foo", "named in Connection, so hop-by-hop"),
    ("X-End-To-End", "kept"),
]
FORBIDDEN_UPSTREAM = {"keep-alive", "proxy-connection", "te", "trailer", "upgrade",
                      "proxy-authorization", "x-foo"}


def test_get_status_headers_and_body_intact(sluice, make_backend):
    """A GET reaches the backend with method and target unchanged, and the backend's
    status, fields (repeated ones in order) and body reach the client unchanged."""
    b = make_backend(fixed(201, [("Content-Type", "text/plain"), ("X-Custom", "abc def"),
                                 ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"),
                                 ("Cache-Control", "no-cache")], b"hello world\n"))
    sluice.start([b])
    r = request(sluice.port, "GET", "/some/path?q=1&r=%20x")
    assert r.status == 201
    assert r.body == b"hello world\n"
    assert r.header("content-type") == "text/plain"
    assert r.header("x-custom") == "abc def"
    assert r.header_all("set-cookie") == ["a=1", "b=2"]
    assert r.header("cache-control") == "no-cache"
    assert len(b.requests) == 1
    req = b.requests[0]
    assert (req.method, req.target) == ("GET", "/some/path?q=1&r=%20x")
    assert req.version == "HTTP/1.1"
    assert b.errors == []


@pytest.mark.parametrize("status", [200, 404, 418, 500, 503])
def test_backend_status_codes_relayed(sluice, make_backend, status):
    """Backend status codes, including errors, are relayed as they are (never rewritten)."""
    b = make_backend(fixed(status, [("X-Status", str(status))], b"status body"))
    sluice.start([b])
    r = request(sluice.port, "GET", "/")
    assert r.status == status
    assert r.header("x-status") == str(status)
    assert r.body == b"status body"


def test_host_kept_as_sent(sluice, backend):
    """The client's Host field reaches the backend exactly as sent, exactly once."""
    sluice.start([backend])
    r = request(sluice.port, "GET", "/", host="Example.Test:8443")
    e = Echoed(r)
    assert e.header_all("host") == ["Example.Test:8443"]


def test_forwarded_headers_added(sluice, backend):
    """sluice adds X-Forwarded-For (client IP), X-Forwarded-Proto: http and
    X-Forwarded-Host (the client's Host), one field each."""
    sluice.start([backend])
    e = Echoed(request(sluice.port, "GET", "/xff", host="app.example:81"))
    assert e.header_all("x-forwarded-for") == ["127.0.0.1"]
    assert e.header_all("x-forwarded-proto") == ["http"]
    assert e.header_all("x-forwarded-host") == ["app.example:81"]


def test_ipv6_addresses_are_written_compressed(sluice, make_backend, tmp_path):
    """IPv6 addresses are written in RFC 5952's compressed form (`[::1]:8080`, never
    `[0:0:0:0:0:0:0:1]`) everywhere sluice writes one: the listening line, X-Forwarded-For,
    the access log's client and backend, /status and the metrics' backend label."""
    try:
        b = make_backend(name="v6", host="::1")
    except OSError as e:
        pytest.skip(f"no IPv6 loopback: {e}")
    log = tmp_path / "access.log"
    sluice.start([b], listen="[::1]:0", args=["--admin", "127.0.0.1:0", "--access-log",
                                              str(log), "--access-log-format", "json"])
    assert sluice.listen_match["host"] == "[::1]", sluice.listen_match.group(0)
    admin_port = int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))
    with connect(sluice.port, host="::1") as sock:
        sock.sendall(build_request("GET", "/six", host="six.example"))
        e = Echoed(read_response(sock))
    assert e.backend == "v6"
    assert e.header_all("x-forwarded-for") == ["::1"]
    assert [x["address"] for x in status(admin_port)["pools"][0]["backends"]] == [b.address]
    assert value(scrape(admin_port), "sluice_backend_up", backend=b.address) == 1
    lines = wait_for_lines(lambda: file_lines(log), 1)
    entry = json.loads(lines[0])
    assert (entry["client"], entry["backend"]) == ("::1", b.address), entry
    assert "0:0:0" not in sluice.stderr_text()


def test_spoofed_x_forwarded_for_replaced(sluice, backend):
    """Without --trusted-proxy, a client's own X-Forwarded-For fields are replaced by the
    peer address, not appended to (otherwise any client could forge its origin)."""
    sluice.start([backend])
    e = Echoed(request(sluice.port, "GET", "/", headers=[
        ("X-Forwarded-For", "1.2.3.4"), ("X-Forwarded-For", "5.6.7.8, 9.9.9.9")]))
    assert e.header_all("x-forwarded-for") == ["127.0.0.1"]


def test_hop_by_hop_request_fields_stripped(sluice, backend):
    """Connection, Keep-Alive, Proxy-Connection, TE, Trailer, Upgrade (without an
    `upgrade` connection option), Proxy-Authorization and every field named in Connection
    never reach the backend; end-to-end fields do."""
    sluice.start([backend])
    e = Echoed(request(sluice.port, "GET", "/hop", headers=HOP_BY_HOP_REQUEST))
    leaked = e.names() & FORBIDDEN_UPSTREAM
    assert not leaked, f"hop-by-hop fields reached the backend: {e.headers}"
    # sluice may send its own Connection field upstream, but none of the client's options.
    assert tokens(e.header_all("connection")) <= {"keep-alive", "close"}, e.headers
    assert e.header_all("x-end-to-end") == ["kept"]


def test_hop_by_hop_response_fields_stripped(sluice, make_backend):
    """Hop-by-hop fields in the backend's response (and fields it names in Connection)
    never reach the client; end-to-end fields do."""
    b = make_backend(fixed(200, [
        ("Connection", "X-Bar, keep-alive"),
        ("Keep-Alive", "timeout=30"),
        ("Proxy-Connection", "keep-alive"),
        ("Proxy-Authenticate", "Basic realm=x"),
        ("Trailer", "X-Checksum"),
        ("Upgrade", "h2c"),
        ("X-Bar", "named in Connection"),
        ("X-End-To-End", "kept"),
    ], b"body"))
    sluice.start([b])
    with Client(sluice.port) as c:
        r = c.request("GET", "/")
        names = {k.lower() for k, _ in r.headers}
        leaked = names & {"keep-alive", "proxy-connection", "proxy-authenticate", "trailer",
                          "upgrade", "x-bar"}
        assert not leaked, f"hop-by-hop fields reached the client: {r.headers}"
        assert r.connection_tokens() <= {"keep-alive", "close"}, r.headers
        assert r.header("x-end-to-end") == "kept"
        assert r.body == b"body"


def _spread(backends, count):
    per = collections.Counter({b.name: len(b.requests) for b in backends})
    expected = count / len(backends)
    return per, all(abs(n - expected) <= 1 for n in per.values())


@pytest.mark.parametrize("n_backends", [2, 3])
def test_round_robin_fresh_connections(sluice, make_backend, n_backends):
    """Round robin: 30 requests on fresh connections split evenly (1/N each, +-1) and
    consecutive requests go to different backends."""
    backends = [make_backend(echo()) for _ in range(n_backends)]
    sluice.start(backends)
    seen = [Echoed(request(sluice.port, "GET", f"/rr/{i}")).backend for i in range(30)]
    per, even = _spread(backends, 30)
    assert even, f"uneven spread {dict(per)}; order {seen}"
    assert all(a != b for a, b in zip(seen, seen[1:])), f"same backend twice in a row: {seen}"


@pytest.mark.parametrize("n_backends", [2, 3])
def test_round_robin_one_keepalive_connection(sluice, make_backend, n_backends):
    """Round robin is per request, not per client connection: 30 requests on one
    keep-alive connection still split 1/N each (+-1)."""
    backends = [make_backend(echo()) for _ in range(n_backends)]
    sluice.start(backends)
    with Client(sluice.port) as c:
        seen = [Echoed(c.request("GET", f"/rr/{i}")).backend for i in range(30)]
    per, even = _spread(backends, 30)
    assert even, f"uneven spread {dict(per)}; order {seen}"


def _assert_still_usable(c: Client):
    """No stray bytes follow a bodiless response, and the next request (to the echo
    default route) works on the same connection."""
    stray = c.read_some(0.2)
    assert stray == b"", f"bytes after a response that has no body: {stray!r}"
    e = Echoed(c.request("GET", "/after"))
    assert e.target == "/after"


def test_head_response_has_no_body(sluice, make_backend):
    """HEAD: the client gets the GET's fields (Content-Length included) and no body, and
    the connection stays usable."""
    b = make_backend(route({"/head": fixed(200, [("Content-Type", "text/plain")], b"x" * 100)}))
    sluice.start([b])
    with Client(sluice.port) as c:
        r = c.request("HEAD", "/head")
        assert r.status == 200
        assert r.body == b""
        assert r.header("content-length") == "100"
        _assert_still_usable(c)
    assert [q.method for q in b.requests] == ["HEAD", "GET"]


def test_204_has_no_body(sluice, make_backend):
    """204 No Content is relayed without a body and the connection stays usable."""
    b = make_backend(route({"/thing": fixed(204, [("X-Empty", "yes")])}))
    sluice.start([b])
    with Client(sluice.port) as c:
        r = c.request("DELETE", "/thing")
        assert r.status == 204
        assert r.header("x-empty") == "yes"
        assert r.header("content-length") in (None, "0") and not r.header("transfer-encoding")
        _assert_still_usable(c)


def test_304_has_no_body(sluice, make_backend):
    """304 Not Modified is relayed without a body and the connection stays usable."""
    b = make_backend(route({"/cached": fixed(304, [("ETag", '"v1"')])}))
    sluice.start([b])
    with Client(sluice.port) as c:
        r = c.request("GET", "/cached", headers=[("If-None-Match", '"v1"')])
        assert r.status == 304
        assert r.header("etag") == '"v1"'
        _assert_still_usable(c)


def test_304_with_content_length_has_no_body(sluice, make_backend):
    """A 304 may carry the Content-Length of the representation (RFC 9110 8.6); sluice
    must not wait for those bytes, and the connection stays usable."""
    b = make_backend(route({"/cached": fixed(304, [("ETag", '"v1"'), ("Content-Length", "1234")])}))
    sluice.start([b])
    with Client(sluice.port) as c:
        r = c.request("GET", "/cached", headers=[("If-None-Match", '"v1"')], timeout=3)
        assert r.status == 304
        _assert_still_usable(c)


def test_head_with_chunked_response_fields(sluice, make_backend):
    """A HEAD answered with `Transfer-Encoding: chunked` and no body: sluice must not wait
    for chunks, and the connection stays usable."""
    b = make_backend(route({"/hc": fixed(200, [("Transfer-Encoding", "chunked")], b"",
                                         auto_length=False)}))
    sluice.start([b])
    with Client(sluice.port) as c:
        r = c.request("HEAD", "/hc", timeout=3)
        assert r.status == 200 and r.body == b""
        _assert_still_usable(c)


def test_trusted_proxy_appends_x_forwarded_for(sluice, backend):
    """With --trusted-proxy covering the client, its X-Forwarded-For is kept and the peer
    address appended (`1.2.3.4, 127.0.0.1`)."""
    sluice.start([backend], args=["--trusted-proxy", "127.0.0.0/8"])
    e = Echoed(request(sluice.port, "GET", "/", headers=[("X-Forwarded-For", "1.2.3.4")]))
    chain = [t.strip() for v in e.header_all("x-forwarded-for") for t in v.split(",")]
    assert chain == ["1.2.3.4", "127.0.0.1"], e.headers


def test_interim_103_from_backend(sluice, make_backend):
    """A backend that sends `103 Early Hints` before its final response: the client gets
    the final 200 with its body (the 103 relayed or dropped), and the connection stays
    usable."""
    b = make_backend(route({"/hints": raw_response(
        b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", close=False, delay=0)}))
    sluice.start([b])
    with Client(sluice.port) as c:
        r = c.request("GET", "/hints")
        assert r.status == 200 and r.body == b"ok", r
        assert all(i.status == 103 for i in r.interim), r.interim
        assert Echoed(c.request("GET", "/after")).target == "/after"


@pytest.mark.parametrize("args,request_kw,expected", [
    (["--target-bytes-max", "100"], {"target": "/" + "t" * 99}, 200),
    (["--target-bytes-max", "100"], {"target": "/" + "t" * 100}, 414),
    (["--headers-count-max", "10"], {"fields": 9}, 200),   # 9 + Host = 10 fields
    (["--headers-count-max", "10"], {"fields": 10}, 431),  # 11 fields
    (["--header-bytes-max", "1KiB", "--target-bytes-max", "512"],
     {"fields": 1, "value": 500}, 200),
    (["--header-bytes-max", "1KiB", "--target-bytes-max", "512"],
     {"fields": 1, "value": 2000}, 431),
], ids=["target_at_limit", "target_over", "count_at_limit", "count_over",
        "bytes_under", "bytes_over"])
def test_configured_limits(sluice, backend, args, request_kw, expected):
    """--target-bytes-max, --headers-count-max and --header-bytes-max are honoured: a
    request at the limit passes, one over it gets 414/431 and reaches no backend."""
    sluice.start([backend], args=args)
    target = request_kw.get("target", "/")
    value = "v" * request_kw.get("value", 1)
    headers = [(f"X-F{i}", value) for i in range(request_kw.get("fields", 0))]
    r = request(sluice.port, "GET", target, headers=headers)
    assert r.status == expected, r
    if expected == 200:
        assert Echoed(r).target == target
    else:
        assert backend.bytes_received == 0
