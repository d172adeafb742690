"""Bodies of any size for JavaScript handlers (issue 25, item 3; docs/ARCHITECTURE.md, "Handler
bodies of any size"): a handler's answer larger than a buffer is sent in windows out of the
request's engine heap, whose slot is kept until the last byte is out; a fetched body larger
than a buffer is returned the same way. Real sockets, both I/O backends, HTTP/1.1 and h2
clients."""

import re
import socket
import threading
import time

import hashlib

from backends import expect_100, fixed
from client import Client, Echoed, connect, read_response, request
from test_admin import ADMIN_RE, scrape, value

HANDLER = r"""
export default async function handler(request) {
  const path = request.path;
  const n = Number(request.query.n ?? "0");
  if (path === "/ascii") return Response.text("a".repeat(n));
  if (path === "/utf8") return Response.text("é€".repeat(n));
  if (path === "/bytes") {
    const b = new Uint8Array(n);
    for (let i = 0; i < n; i++) b[i] = i % 251;
    return new Response(b, { headers: { "content-type": "application/octet-stream" } });
  }
  if (path === "/fetched") return fetch("http://big/x");
  if (path === "/fetched-changed") {
    const r = await fetch("http://big/x");
    return new Response(r.body, { status: 203, headers: { "x-edge": "yes" } });
  }
  if (path === "/proxy") return Response.proxy("app", { headers: { "x-seen": String(request.body === null) } });
  if (path === "/local") return Response.text("no thanks", { status: 403 });
  if (path === "/text") {
    const t = await request.text();
    return Response.json({ length: t.length, first: t.slice(0, 3), last: t.slice(-3), body: request.body });
  }
  if (path === "/bytes-sum") {
    const b = new Uint8Array(await request.arrayBuffer());
    let sum = 0;
    for (let i = 0; i < b.length; i += 997) sum = (sum + b[i]) % 65521;
    return Response.json({ length: b.length, sum });
  }
  if (path === "/json") return Response.json({ got: (await request.json()).a });
  if (path === "/twice") {
    await request.text();
    try { await request.text(); return Response.text("read twice"); } catch (e) { return Response.text(e.name + ": " + e.message, { status: 409 }); }
  }
  if (path === "/read-or-not") {
    try { return Response.text("read " + (await request.text()).length); } catch (e) { return Response.text(e.message, { status: 507 }); }
  }
  if (path === "/read-then-proxy") { await request.text(); return Response.proxy("app"); }
  if (path === "/fields") {
    const headers = new Headers();
    for (let i = 0; i < n; i++) headers.append(i < 2 ? "Set-Cookie" : "x-f-" + i, "v" + i);
    return new Response("fields", { status: 202, headers });
  }
  if (path === "/empty") return new Response(null, { status: 204, headers: { "X-Why": "none" } });
  return Response.text("small");
}
"""

SITE = """\
.{
    .listen = "127.0.0.1:0",
    .admin = .{ .listen = "127.0.0.1:0" },
    .handlers = .{ .edge = .{ .file = "edge.js", .memory = "12MiB", .suspended_max = SUSPENDED, .deadline = "DEADLINE", .budget = 1000000000, .body_max = "BODY_MAX" } },
    .pools = .{ .big = .{ .backends = .{"BIG"} }, .app = .{ .backends = .{"APP"} } },
    .routes = .{ .{ .handler = "edge" } },
}
"""

BIG = bytes(i % 253 for i in range(3 << 20))


def start(sluice, make_backend, tmp_path, suspended=4, args=(), workers=1, deadline="2s", body_max="16MiB"):
    """sluice with the handler above (12 MiB of heap) and a pool `big` whose backend answers a
    3 MiB body, and a pool `app` whose backend echoes what it got (after a 100 Continue when
    asked for one). Returns the admin port."""
    big = make_backend(fixed(200, body=BIG), name="big1")
    app = make_backend(expect_100(), name="app1")
    (tmp_path / "edge.js").write_text(HANDLER)
    config = tmp_path / "site.zon"
    config.write_text(SITE.replace("SUSPENDED", str(suspended)).replace("BIG", big.address)
                      .replace("DEADLINE", deadline).replace("BODY_MAX", body_max)
                      .replace("APP", app.address))
    sluice.start_config(config, workers=workers, args=args)
    return int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))


def pattern(n):
    return bytes(i % 251 for i in range(n))


def test_answers_larger_than_a_buffer_on_http1(sluice, make_backend, tmp_path):
    """Strings (ASCII and not) and bytes of a few MiB arrive whole with their Content-Length on
    a keep-alive connection, which then serves a pipelined request; HEAD gets the head with the
    length and no body, and HTTP/1.0 the bytes then a close."""
    start(sluice, make_backend, tmp_path)
    with Client(sluice.port, timeout=20) as c:
        r = c.request("GET", "/ascii?n=3000000")
        assert r.status == 200 and r.body == b"a" * 3000000, (r.status, len(r.body))
        assert r.header("content-length") == "3000000"
        r = c.request("GET", "/utf8?n=400000")
        assert r.body == "é€".encode() * 400000 and r.header("content-length") == str(2000000)
        c.send(b"GET /bytes?n=1500000 HTTP/1.1\r\nHost: a\r\n\r\nGET /small HTTP/1.1\r\nHost: a\r\n\r\n")
        r = c.read_response()
        assert r.header("content-type") == "application/octet-stream"
        assert r.body == pattern(1500000), len(r.body)
        assert c.read_response().body == b"small"
        r = c.request("HEAD", "/ascii?n=100000")
        assert r.status == 200 and r.header("content-length") == "100000" and r.body == b""
        assert c.request("GET", "/small").body == b"small"
    r = request(sluice.port, "GET", "/ascii?n=200000", version="HTTP/1.0", timeout=10)
    assert r.body == b"a" * 200000


def test_answers_larger_than_a_buffer_on_http2(sluice, make_backend, tmp_path):
    """The same answers to h2 streams side by side on one connection: DATA frames out of the
    kept slots, with flow control's backpressure."""
    from h2client import H2Client
    start(sluice, make_backend, tmp_path, args=["--http2", "on"])
    c = H2Client.plain(sluice.port)
    a = c.request("GET", "/ascii?n=1000000")
    b = c.request("GET", "/bytes?n=700000")
    s = c.request("GET", "/small")
    responses = c.wait(a, b, s, timeout=20)
    assert responses[a].status == 200 and responses[a].body == b"a" * 1000000
    assert responses[b].body == pattern(700000)
    assert responses[s].body == b"small"
    c.close()


def test_a_handlers_fields_are_framed_by_each_protocol(sluice, make_backend, tmp_path):
    """A handler writes fields and a body; HTTP/1.1 frames them with a status line and its
    Content-Length, HTTP/2 with `:status` and content-length and its names lowercased
    (http/LocalResponse.zig). 100 fields are sent (Content-Type and 99 of the handler's, two
    Set-Cookie values kept apart); 101 are a 500 on both, as `response_too_large`; a 204 has
    no length and no body."""
    from h2client import H2Client
    start(sluice, make_backend, tmp_path, args=["--http2", "on"])
    with Client(sluice.port, timeout=10) as c:
        r = c.request("GET", "/fields?n=99")
        assert r.status == 202 and r.body == b"fields" and r.header("content-length") == "6"
        assert len(r.headers) == 100 + 1, r.headers  # And Content-Length.
        assert [v for k, v in r.headers if k.lower() == "set-cookie"] == ["v0", "v1"]
        r = c.request("GET", "/empty")
        assert r.status == 204 and r.body == b"" and r.header("content-length") is None
        assert r.header("x-why") == "none"
        assert c.request("GET", "/small").body == b"small"  # The connection carries on.
        assert c.request("GET", "/fields?n=100").status == 500
    h2 = H2Client.plain(sluice.port)
    ok, over, empty = h2.request("GET", "/fields?n=99"), h2.request("GET", "/fields?n=100"), h2.request("GET", "/empty")
    head = h2.request("HEAD", "/ascii?n=70000")
    responses = h2.wait(ok, over, empty, head)
    r = responses[ok]
    assert r.status == 202 and r.body == b"fields" and r.header("content-length") == "6"
    assert len(r.headers) == 1 + 101 and all(k == k.lower() for k, _ in r.headers), r.headers  # :status.
    assert [v for k, v in r.headers if k == "set-cookie"] == ["v0", "v1"]
    assert responses[over].status == 500
    assert responses[empty].status == 204 and responses[empty].body == b""
    assert responses[empty].header("content-length") is None and responses[empty].header("x-why") == "none"
    assert responses[head].status == 200 and responses[head].body == b""
    assert responses[head].header("content-length") == "70000"
    h2.close()


def test_a_fetched_body_larger_than_a_buffer_is_returned(sluice, make_backend, tmp_path):
    """A 3 MiB fetched body, gathered into the request's heap, goes back to the client as it
    is or with a changed status and field."""
    start(sluice, make_backend, tmp_path)
    with Client(sluice.port, timeout=20) as c:
        r = c.request("GET", "/fetched")
        assert r.status == 200 and r.body == BIG, (r.status, len(r.body))
        r = c.request("GET", "/fetched-changed")
        assert (r.status, r.header("x-edge"), r.body == BIG) == (203, "yes", True)


def test_a_slow_client_holds_its_slot_and_others_are_served(sluice, make_backend, tmp_path):
    """A client that reads a 3 MiB answer slowly keeps its slot (one of `suspended_max`) while
    other clients get large and small answers; it still gets every byte."""
    start(sluice, make_backend, tmp_path, suspended=2)
    slow = connect(sluice.port, timeout=20, rcvbuf=4096)
    slow.sendall(b"GET /ascii?n=3000000 HTTP/1.1\r\nHost: a\r\n\r\n")
    time.sleep(0.2)
    for _ in range(3):
        assert request(sluice.port, "GET", "/bytes?n=300000", timeout=10).body == pattern(300000)
        assert request(sluice.port, "GET", "/small", timeout=10).body == b"small"
    r = read_response(slow, timeout=20)
    assert r.body == b"a" * 3000000
    slow.close()


def test_clients_that_leave_mid_body_free_their_slots(sluice, make_backend, tmp_path):
    """Clients that close after the first bytes of a large answer: each kept slot is freed
    (with `suspended_max = 2`, five in a row would otherwise leave none, and the large answers
    after them would be 503 `busy`)."""
    admin = start(sluice, make_backend, tmp_path, suspended=2)
    for _ in range(5):
        s = connect(sluice.port, timeout=10, rcvbuf=4096)
        s.sendall(b"GET /ascii?n=4000000 HTTP/1.1\r\nHost: a\r\n\r\n")
        assert s.recv(100).startswith(b"HTTP/1.1 200")
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()  # A reset.
    deadline = time.monotonic() + 5
    while True:
        r = request(sluice.port, "GET", "/ascii?n=500000", timeout=10)
        if r.status == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert r.status == 200 and r.body == b"a" * 500000
    families = scrape(admin)
    assert (value(families, "sluice_handler_failures_total", handler="edge", reason="busy") or 0) == 0


def test_no_heap_allocations_per_large_answer(sluice, make_backend, tmp_path):
    """Large answers (strings, bytes, a fetched body), bodies read on demand and unread bodies
    proxied leave heap_allocations_after_startup unchanged."""
    start(sluice, make_backend, tmp_path, workers=2)
    body = b"b" * 300000
    targets = [("GET", "/ascii?n=200000"), ("GET", "/utf8?n=30000"), ("GET", "/bytes?n=100000"),
               ("GET", "/fetched"), ("GET", "/small"), ("POST", "/text"), ("POST", "/bytes-sum"),
               ("POST", "/proxy")]

    def load(rounds):
        errors = []

        def worker(offset):
            for i in range(rounds):
                method, target = targets[(i + offset) % len(targets)]
                r = request(sluice.port, method, target, body=body if method == "POST" else None, timeout=20)
                if r.status != 200:
                    errors.append(r.status)

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, errors[:3]

    load(5)
    before = sluice.stats()
    load(10)
    after = sluice.stats()
    key = "heap_allocations_after_startup"
    assert after[key] == before[key], (before, after)


UPLOAD = bytes((i * 7) % 256 for i in range(5 << 20))


def test_an_unread_upload_larger_than_a_buffer_is_proxied_streamed(sluice, make_backend, tmp_path):
    """A handler that only looks at the head proxies a 5 MiB upload: it runs before the body
    is read (`request.body` is null), and the pool gets every byte, streamed, with its
    Content-Length; with `Expect: 100-continue` the backend's 100 reaches the client, which
    then sends the body. A local answer to such a request closes the connection after it
    (the body is not read)."""
    start(sluice, make_backend, tmp_path)
    digest = hashlib.sha256(UPLOAD).hexdigest()
    with Client(sluice.port, timeout=30) as c:
        e = Echoed(c.request("POST", "/proxy", body=UPLOAD))
        assert (e.body_len, e.body_sha256, e.framing, e.header("x-seen")) == (len(UPLOAD), digest, "length", "true")
        # The connection serves on.
        e = Echoed(c.request("POST", "/proxy", body=b"small"))
        assert (e.body, e.header("x-seen")) == (b"small", "false")
    with Client(sluice.port, timeout=30) as c:
        c.send(b"POST /proxy HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(UPLOAD))
        interim = c.read_response(skip_interim=False)
        assert interim.status == 100, interim
        c.send(UPLOAD)
        e = Echoed(c.read_response())
        assert (e.body_len, e.body_sha256) == (len(UPLOAD), digest)
    with Client(sluice.port, timeout=30) as c:
        c.send(b"POST /local HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n" % len(UPLOAD) + UPLOAD[:100000])
        r = c.read_response()
        assert r.status == 403 and "close" in r.connection_tokens(), r


def test_an_unread_upload_over_http2_is_proxied_streamed(sluice, make_backend, tmp_path):
    """The same 5 MiB upload as an h2 stream with a content-length: DATA frames go on to the
    pool as they come, with flow control's backpressure."""
    from h2client import H2Client
    start(sluice, make_backend, tmp_path, args=["--http2", "on"])
    c = H2Client.plain(sluice.port)
    sid = c.request("POST", "/proxy", headers=[("content-length", str(len(UPLOAD)))], body=UPLOAD)
    r = c.wait(sid, timeout=30)[sid]
    assert r.status == 200, r.status
    import json
    data = json.loads(r.body)
    assert (data["body_len"], data["body_sha256"]) == (len(UPLOAD), hashlib.sha256(UPLOAD).hexdigest())
    c.close()


def chunked(data, size=65536):
    parts = [b"%x\r\n%s\r\n" % (len(data[i:i + size]), data[i:i + size]) for i in range(0, len(data), size)]
    return b"".join(parts) + b"0\r\n\r\n"


TEXT = (b"abc" + b"x" * (3 << 20) + b"xyz")


def byte_sum(data):
    return sum(data[i] for i in range(0, len(data), 997)) % 65521


def test_a_body_larger_than_a_buffer_is_read_when_the_handler_asks(sluice, make_backend, tmp_path):
    """`await request.text()`, `.arrayBuffer()` and `.json()` gather a body of a few MiB into
    the request's heap, Content-Length or chunked, with and without `Expect: 100-continue`
    (the 100 is sent when the handler asks for the body); `request.body` stays null. The
    connection serves on after a body read whole; a second read rejects ("body already
    used")."""
    start(sluice, make_backend, tmp_path)
    expected = {"length": len(TEXT), "first": "abc", "last": "xyz", "body": None}
    with Client(sluice.port, timeout=30) as c:
        assert c.request("POST", "/text", body=TEXT).json() == expected
        c.send(b"POST /text HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(TEXT))
        assert c.read_response().json() == expected
        assert c.request("POST", "/bytes-sum", body=UPLOAD).json() == {"length": len(UPLOAD), "sum": byte_sum(UPLOAD)}
        big_json = b'{"pad": "' + b"p" * (1 << 20) + b'", "a": [1, 2]}'
        assert c.request("POST", "/json", body=big_json).json() == {"got": [1, 2]}
        r = c.request("POST", "/twice", body=TEXT)
        assert r.status == 409 and b"body already used" in r.body, r
        # A small chunked body is read the same way (its length was unknown).
        c.send(b"POST /text HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(b"abcdefxyz", 2))
        assert c.read_response().json() == {"length": 9, "first": "abc", "last": "xyz", "body": None}
        for framing in (b"Content-Length: %d\r\n" % len(TEXT), b"Transfer-Encoding: chunked\r\n"):
            c.send(b"POST /text HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n" + framing + b"\r\n")
            interim = c.read_response(skip_interim=False)
            assert interim.status == 100, interim
            c.send(TEXT if framing.startswith(b"Content") else chunked(TEXT))
            assert c.read_response().json() == expected


def test_a_body_read_over_http2(sluice, make_backend, tmp_path):
    """h2 streams with and without a content-length: the body's DATA is gathered for
    `request.arrayBuffer()`, side by side on one connection. The test client's uploads go at
    about 1 MiB a second, a window per round trip, and take longer than the handler's 300 ms
    deadline, which does not run while the body arrives."""
    from h2client import H2Client
    import json
    start(sluice, make_backend, tmp_path, args=["--http2", "on"], deadline="300ms")
    c = H2Client.plain(sluice.port)
    body = UPLOAD[:1 << 20]
    a = c.request("POST", "/bytes-sum", headers=[("content-length", str(len(body)))], body=body)
    b = c.request("POST", "/bytes-sum", body=body)
    responses = c.wait(a, b, timeout=30)
    for sid in (a, b):
        assert json.loads(responses[sid].body) == {"length": len(body), "sum": byte_sum(body)}
    c.close()


def test_a_body_over_the_memory_or_the_limit(sluice, make_backend, tmp_path):
    """A declared body larger than the handler's memory rejects the read with a TypeError the
    handler can catch (then the connection closes: the rest is not read); a chunked body that
    grows past `body_max` is a 413 as it is read; one past the memory rejects too."""
    start(sluice, make_backend, tmp_path, body_max="16MiB")
    big = b"m" * (14 << 20)  # The heap is 12 MiB.
    with Client(sluice.port, timeout=30) as c:
        c.send(b"POST /read-or-not HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n" % len(big))
        r = c.read_response()
        assert r.status == 507 and b"does not fit the handler's memory" in r.body, r
        assert "close" in r.connection_tokens()
    with Client(sluice.port, timeout=30) as c:
        try:
            c.send(b"POST /read-or-not HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(big))
        except (BrokenPipeError, ConnectionResetError):
            pass  # The answer came first.
        r = c.read_response()
        assert r.status == 507 and b"does not fit the handler's memory" in r.body, r


def test_a_chunked_body_past_body_max_is_413(sluice, make_backend, tmp_path):
    """`body_max = "1MiB"`: a chunked body read for the handler that passes it is a 413."""
    start(sluice, make_backend, tmp_path, body_max="1MiB")
    with Client(sluice.port, timeout=30) as c:
        try:
            c.send(b"POST /read-or-not HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(b"q" * (2 << 20)))
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert c.read_response().status == 413


def test_the_deadline_stops_while_the_body_arrives_and_a_client_that_leaves(sluice, make_backend, tmp_path):
    """The handler's deadline (300 ms here) does not run while the client sends the body the
    handler asked for: a body trickled over about 1.5 s, in pieces 100 ms apart, is read
    whole and answered. A client that sends half its body and stalls is timed out as one
    sending a body to a pool is: a 408 after the client idle timeout (700 ms here), not a 500.
    One that sends half and closes: the call is abandoned at once."""
    admin = start(sluice, make_backend, tmp_path, deadline="300ms", args=["--client-idle-timeout", "700ms"])
    with Client(sluice.port, timeout=10) as c:
        c.send(b"POST /text HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n")
        started = time.monotonic()
        for piece in (b"abc", b"-" * 1000, b"x" * 5000, b"xyz") * 4:
            c.send(b"%x\r\n%s\r\n" % (len(piece), piece))
            time.sleep(0.1)
        c.send(b"0\r\n\r\n")
        r = c.read_response()
        assert time.monotonic() - started > 1.2
        assert r.status == 200 and r.json()["length"] == 4 * 6006, r
    with Client(sluice.port, timeout=10) as c:
        c.send(b"POST /text HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000\r\n\r\n" + b"h" * 500000)
        started = time.monotonic()
        r = c.read_response()
        waited = time.monotonic() - started
        assert r.status == 408 and 0.6 < waited < 3, (r, waited)
    s = connect(sluice.port, timeout=10)
    s.sendall(b"POST /text HTTP/1.1\r\nHost: a\r\nContent-Length: 1000000\r\n\r\n" + b"h" * 500000)
    time.sleep(0.1)
    s.close()
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        families = scrape(admin)
        if (value(families, "sluice_handler_failures_total", handler="edge", reason="abandoned") or 0) >= 2:
            break
        time.sleep(0.05)
    assert (value(families, "sluice_handler_failures_total", handler="edge", reason="deadline") or 0) == 0
    # The stalled client's call and the one that left were both abandoned.
    assert value(families, "sluice_handler_failures_total", handler="edge", reason="abandoned") == 2
    assert request(sluice.port, "POST", "/text", body=b"abcxyz", timeout=10).json()["length"] == 6


def test_response_proxy_after_a_read(sluice, make_backend, tmp_path):
    """A body the handler read goes on with `Response.proxy` while it is still whole in the
    buffer (a small chunked one); one larger than the buffer is gone, and the proxy is a 500
    (`request_too_large`) rather than a request without its body."""
    start(sluice, make_backend, tmp_path)
    with Client(sluice.port, timeout=30) as c:
        c.send(b"POST /read-then-proxy HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(b"abcdef", 2))
        e = Echoed(c.read_response())
        assert (e.body, e.framing) == (b"abcdef", "chunked")
    mark = sluice.mark()
    r = request(sluice.port, "POST", "/read-then-proxy", body=TEXT, timeout=30)
    assert r.status == 500, r
    sluice.wait_for_line(re.compile(r"handler_request_too_large: .*after the handler read a request body larger than the buffer"), start=mark)


def test_a_reload_and_a_drain_during_a_large_answer(sluice, make_backend, tmp_path):
    """A reload that recompiles the handler while a slow client reads a 3 MiB answer: the
    answer comes whole from the old engine (its exchange holds the old generation), new
    requests get the new code. Then SIGTERM while another slow answer is half read: the drain
    lets it finish, and sluice exits 0 with nothing in use."""
    start(sluice, make_backend, tmp_path)
    slow = connect(sluice.port, timeout=20, rcvbuf=4096)
    slow.sendall(b"GET /ascii?n=3000000 HTTP/1.1\r\nHost: a\r\n\r\n")
    time.sleep(0.2)
    (tmp_path / "edge.js").write_text(HANDLER.replace('Response.text("small")', 'Response.text("new")'))
    mark = sluice.mark()
    sluice.signal(1)  # SIGHUP
    sluice.wait_for_line(re.compile(r"reloaded .*generation 2"), start=mark, timeout=10)
    assert request(sluice.port, "GET", "/small", timeout=10).body == b"new"
    assert read_response(slow, timeout=20).body == b"a" * 3000000
    slow.close()
    slow = connect(sluice.port, timeout=20, rcvbuf=4096)
    slow.sendall(b"GET /utf8?n=500000 HTTP/1.1\r\nHost: a\r\n\r\n")
    assert slow.recv(4096).startswith(b"HTTP/1.1 200")
    sluice.signal(15)  # SIGTERM: a drain
    time.sleep(0.2)
    rest = b""
    while True:
        data = slow.recv(1 << 20)
        if not data:
            break
        rest += data
    assert len(rest) > 2400000 and rest.endswith("é€".encode()), len(rest)
    slow.close()
    assert sluice.wait(10) == 0
    assert "buffers_in_use=0" in sluice.stderr_text()


def test_large_answers_and_reads_over_tls(sluice, make_backend, tmp_path):
    """Over TLS (the codec seals each window into records): a 2 MiB answer, a 2 MiB body read
    by the handler, and a 2 MiB unread body proxied, on one keep-alive connection."""
    from test_tls import tls_args, tls_client
    start(sluice, make_backend, tmp_path, args=tls_args())
    c = tls_client(sluice.port, timeout=30)
    try:
        assert c.request("GET", "/bytes?n=2000000").body == pattern(2000000)
        body = UPLOAD[:2 << 20]
        assert c.request("POST", "/bytes-sum", body=body).json() == {"length": len(body), "sum": byte_sum(body)}
        e = Echoed(c.request("POST", "/proxy", body=body))
        assert (e.body_len, e.body_sha256) == (len(body), hashlib.sha256(body).hexdigest())
    finally:
        c.close()
