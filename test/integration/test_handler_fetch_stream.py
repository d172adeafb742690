"""A fetched response streamed from the pool (issue 25, item 2; docs/ARCHITECTURE.md, "`fetch`
to pools"): the fetch settles when the pool's head is in, the body is read on demand
(`text()`, `json()`, `arrayBuffer()`) or, returned as it is or in a `new Response`, relayed to
the client window by window with the client's backpressure, never gathered into the handler's
memory. Real sockets, both I/O backends, HTTP/1.1, h2 and TLS clients."""

import hashlib
import socket
import time

from backends import Behaviour, chunked, close_delimited, fixed, slow_body
from client import BufferedSocket, Client, Deadline, request
from conftest import assert_quiescent
from test_admin import ADMIN_RE

HANDLER = r"""
export default async function handler(request) {
  const path = request.path;
  if (path === "/as-is") return fetch("http://big/x");
  if (path === "/changed") {
    const r = await fetch("http://" + (request.query.pool ?? "big") + "/x");
    const headers = new Headers(r.headers);
    headers.set("x-edge", "streamed");
    headers.delete("x-backend");
    return new Response(r.body, { status: 203, headers });
  }
  if (path === "/text") {
    const r = await fetch("http://" + request.query.pool + "/x");
    const before = r.bodyUsed;
    const t = await r.text();
    let again = "", wrap = "";
    try { await r.text(); } catch (e) { again = e.name + ": " + e.message; }
    try { new Response(r.body); } catch (e) { wrap = e.name + ": " + e.message; }
    return Response.json({ length: t.length, head: t.slice(0, 4), before, after: r.bodyUsed, again, wrap, kind: String(r.body) });
  }
  if (path === "/read-then-return") {
    const r = await fetch("http://" + request.query.pool + "/x");
    await r.arrayBuffer();
    return r;
  }
  if (path === "/too-big") {
    const r = await fetch("http://big/x");
    try { await r.arrayBuffer(); return Response.text("read"); } catch (e) { return Response.text(e.message, { status: 507 }); }
  }
  if (path === "/late-read") {
    const r = await fetch("http://cut/x");
    await new Promise((resolve) => setTimeout(resolve, 300));
    try { await r.text(); return Response.text("read"); } catch (e) { return Response.text(e.name + ": " + e.message, { status: 502 }); }
  }
  if (path === "/ignored") {
    const r = await fetch("http://big/x");
    return Response.text("ignored " + r.status);
  }
  if (path === "/head") {
    const r = await fetch("http://big/x");
    return new Response(r.body, { status: r.status, headers: r.headers });
  }
  return Response.text("small");
}
"""

SITE = """\
.{
    .listen = "127.0.0.1:0",
    .admin = .{ .listen = "127.0.0.1:0" },
    .handlers = .{ .edge = .{ .file = "edge.js", .memory = "1MiB", .deadline = "DEADLINE" } },
    .pools = .{
        .big = .{ .backends = .{"BIG"} },
        .chunked = .{ .backends = .{"CHUNKED"} },
        .closing = .{ .backends = .{"CLOSING"} },
        .small = .{ .backends = .{"SMALL"} },
        .broken = .{ .backends = .{"BROKEN"} },
        .mid = .{ .backends = .{"MID"} },
        .cut = .{ .backends = .{"CUT"} },
    },
    .routes = .{ .{ .handler = "edge" } },
}
"""

BIG = bytes((i * 31 + (i >> 12)) % 256 for i in range(20 << 20))
BIG_SHA = hashlib.sha256(BIG).hexdigest()
MID = bytes(48 + i % 75 for i in range(400_000))
CLOSING = MID[:150_000]
PARTS = [bytes([65 + i % 26]) * (20_000 + i) for i in range(8)]


def sha(b):
    return hashlib.sha256(b).hexdigest()


def read_to_close(sock, timeout=30.0):
    return BufferedSocket(sock).read_to_close(Deadline(timeout))


class Counted(Behaviour):
    """A Content-Length response of `total` bytes sent in 64 KiB pieces, recording how many
    have gone and whether the peer went away."""

    def __init__(self, total):
        self.total, self.sent, self.failed = total, 0, False

    def on_request(self, conn, req):
        conn.send_head(200, [("Content-Length", str(self.total))])
        piece = b"s" * 65536
        try:
            while self.sent < self.total:
                n = min(len(piece), self.total - self.sent)
                conn.send(piece[:n])
                self.sent += n
        except OSError:
            self.failed = True
            return False
        conn.responses_sent += 1
        return True


def start(sluice, make_backend, tmp_path, args=(), deadline="5s", big=None):
    backends = {
        "big": make_backend(big or fixed(200, headers=[("X-Backend", "b1"), ("Content-Type", "application/octet-stream")], body=BIG), name="big1"),
        "chunked": make_backend(chunked(PARTS, delay=0.0), name="chunked1"),
        "closing": make_backend(close_delimited(CLOSING, delay=0.0), name="closing1"),
        "small": make_backend(fixed(200, body=b"tiny body"), name="small1"),
        "broken": make_backend(slow_body(body=b"k" * (4 << 20), chunk=256 << 10, delay=0.0, stall_after=1 << 20, stall=0.2), name="broken1"),
        "mid": make_backend(fixed(200, body=MID), name="mid1"),
        "cut": make_backend(slow_body(body=b"c" * 100_000, chunk=1000, delay=0.0, stall_after=1000, stall=0.0), name="cut1"),
    }
    (tmp_path / "edge.js").write_text(HANDLER)
    config = tmp_path / "site.zon"
    text = SITE.replace("DEADLINE", deadline)
    for name, b in backends.items():
        text = text.replace(f'"{name.upper()}"', f'"{b.address}"')
    config.write_text(text)
    sluice.start_config(config, workers=1, args=args)
    admin = int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))
    return admin, backends


def test_a_20_mib_body_is_streamed_through_a_1_mib_handler_over_http1(sluice, make_backend, tmp_path):
    """Returned as it is, and in a `new Response` with a header added and one removed: the
    bytes arrive whole (hash), with the pool's Content-Length, through a handler whose memory
    is a twentieth of the body; the connection then serves the next request."""
    start(sluice, make_backend, tmp_path)
    with Client(sluice.port, timeout=30) as c:
        r = c.request("GET", "/as-is")
        assert r.status == 200 and r.header("content-length") == str(len(BIG)), (r.status, r.headers)
        assert sha(r.body) == BIG_SHA
        r = c.request("GET", "/changed")
        assert (r.status, r.header("x-edge"), r.header("x-backend")) == (203, "streamed", None), r.headers
        assert r.header("content-type") == "application/octet-stream"
        assert sha(r.body) == BIG_SHA
        assert c.request("GET", "/small").body == b"small"
        # Chunked at the pool: chunked to the client; close-delimited: ends with a close.
        r = c.request("GET", "/changed?pool=chunked")
        assert r.header("transfer-encoding") == "chunked" and r.body == b"".join(PARTS)
        r = c.request("GET", "/changed?pool=closing")
        assert r.body == CLOSING
    # HEAD: the head with the pool's length, no body.
    r = request(sluice.port, "HEAD", "/head", timeout=10)
    assert r.status == 200 and r.header("content-length") == str(len(BIG)) and r.body == b""
    assert_quiescent(sluice)


def test_a_20_mib_body_is_streamed_over_http2(sluice, make_backend, tmp_path):
    """Two streams of one h2 connection relay 20 MiB each side by side, DATA frames made from
    the pool's windows, and a chunked pool body is de-chunked into DATA."""
    from h2client import H2Client
    start(sluice, make_backend, tmp_path, args=["--http2", "on"])
    c = H2Client.plain(sluice.port)
    a = c.request("GET", "/as-is")
    b = c.request("GET", "/changed")
    k = c.request("GET", "/changed?pool=chunked")
    responses = c.wait(a, b, k, timeout=60)
    assert responses[a].status == 200 and sha(responses[a].body) == BIG_SHA
    assert responses[b].status == 203 and sha(responses[b].body) == BIG_SHA
    assert responses[k].body == b"".join(PARTS)
    c.close()


def test_a_20_mib_body_is_streamed_over_tls(sluice, make_backend, tmp_path):
    from test_tls import tls_args, tls_client
    start(sluice, make_backend, tmp_path, args=tls_args())
    c = tls_client(sluice.port, timeout=60)
    try:
        r = c.request("GET", "/changed")
        assert r.status == 203 and sha(r.body) == BIG_SHA
        assert c.request("GET", "/small").body == b"small"
    finally:
        c.close()


def test_a_slow_client_slows_the_pool(sluice, make_backend, tmp_path):
    """A client that reads nothing: the pool's connection is read no further than the windows
    in flight and the sockets' buffers, so the backend's send blocks far short of 256 MiB;
    when the client reads, the rest comes."""
    counted = Counted(256 << 20)
    _, backends = start(sluice, make_backend, tmp_path, big=counted)
    s = socket.create_connection(("127.0.0.1", sluice.port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    s.sendall(b"GET /as-is HTTP/1.1\r\nHost: a\r\n\r\n")
    time.sleep(1.5)
    stalled = counted.sent
    time.sleep(0.5)
    assert counted.sent == stalled, (stalled, counted.sent)  # Blocked, not trickling.
    assert stalled < 48 << 20, stalled
    # Reading 8 MiB more lets the backend go on.
    got = 0
    s.settimeout(10)
    while got < 8 << 20:
        got += len(s.recv(1 << 20))
    time.sleep(0.3)
    assert counted.sent > stalled
    s.close()


def test_a_client_that_leaves_mid_body_frees_the_fetch(sluice, make_backend, tmp_path):
    """The client closes after 1 MiB: the sub-exchange is aborted (the backend's send fails),
    its slot and buffers are freed, and nothing was allocated."""
    counted = Counted(64 << 20)
    _, backends = start(sluice, make_backend, tmp_path, big=counted)
    for _ in range(3):
        s = socket.create_connection(("127.0.0.1", sluice.port))
        s.sendall(b"GET /changed HTTP/1.1\r\nHost: a\r\n\r\n")
        got = 0
        while got < 1 << 20:
            got += len(s.recv(65536))
        s.close()
        deadline = time.time() + 5
        while not counted.failed and time.time() < deadline:
            time.sleep(0.05)
        assert counted.failed
        counted.failed, counted.sent = False, 0
    assert request(sluice.port, "GET", "/small").body == b"small"
    assert_quiescent(sluice)


def test_a_pool_that_breaks_off_mid_body(sluice, make_backend, tmp_path):
    """The backend closes after 1 MiB of 4: an HTTP/1.1 client's connection is closed short of
    the length; an h2 client's stream is reset, and its connection serves on."""
    from h2client import H2Client
    start(sluice, make_backend, tmp_path, args=["--http2", "on"])
    s = socket.create_connection(("127.0.0.1", sluice.port))
    s.settimeout(10)
    s.sendall(b"GET /changed?pool=broken HTTP/1.1\r\nHost: a\r\n\r\n")
    data = read_to_close(s)
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    assert b"Content-Length: 4194304" in head, head
    assert 0 < len(body) < 4 << 20
    c = H2Client.plain(sluice.port)
    a = c.request("GET", "/changed?pool=broken")
    b = c.request("GET", "/small")
    responses = c.wait(a, b, timeout=20)
    assert responses[a].reset is not None or len(responses[a].body) < 4 << 20, responses[a]
    assert responses[b].body == b"small"
    c.close()
    assert_quiescent(sluice)


def test_a_body_that_broke_off_before_it_was_read_rejects_its_read(sluice, make_backend, tmp_path):
    """The pool's body stops at 1,000 bytes of a promised 100,000 while the handler waits on a
    timer; its later `text()` rejects with a TypeError that names the pool, and the fetch's
    slot is free again."""
    start(sluice, make_backend, tmp_path)
    for _ in range(3):
        r = request(sluice.port, "GET", "/late-read", timeout=10)
        assert r.status == 502, r
        assert r.body.startswith(b"TypeError: fetch: "), r.body
        assert b'pool "cut"' in r.body or b"broke off" in r.body, r.body
    assert request(sluice.port, "GET", "/small").body == b"small"
    assert_quiescent(sluice)


def test_text_after_the_head_and_body_used(sluice, make_backend, tmp_path):
    """`text()` gathers a body that did not come with the head (400 KB, chunked, and
    close-delimited ones) and one that did; `bodyUsed` turns true; a second read and a new
    Response over the used body are TypeErrors; returning a read Response is a 500; reading
    a body past the handler's memory rejects; a body neither read nor returned is aborted."""
    admin, backends = start(sluice, make_backend, tmp_path)
    for pool, length, head in (("mid", len(MID), MID[:4]), ("chunked", sum(map(len, PARTS)), PARTS[0][:4]),
                               ("closing", len(CLOSING), CLOSING[:4]), ("small", 9, b"tiny")):
        r = request(sluice.port, "GET", f"/text?pool={pool}", timeout=10)
        assert r.status == 200, (pool, r)
        j = r.json()
        assert (j["length"], j["head"], j["before"], j["after"]) == (length, head.decode("latin-1"), False, True), (pool, j)
        assert j["again"] == "TypeError: Response.text: body already used (a fetched body can be read or returned once)", j
        assert j["wrap"].startswith("TypeError: Response constructor: body already used"), j
        assert j["kind"] == "[object Object]" or j["kind"].startswith("[object"), j
    assert request(sluice.port, "GET", "/read-then-return?pool=mid").status == 500
    r = request(sluice.port, "GET", "/too-big", timeout=10)
    assert r.status == 507 and b"handler's memory" in r.body, r
    r = request(sluice.port, "GET", "/ignored", timeout=10)
    assert r.body == b"ignored 200"
    assert request(sluice.port, "GET", "/small").body == b"small"
    assert_quiescent(sluice)


def test_no_heap_allocations_while_streaming(sluice, make_backend, tmp_path):
    """Streamed returns, reads and aborted bodies leave heap_allocations_after_startup at 0."""
    start(sluice, make_backend, tmp_path)
    for target in ("/changed?pool=mid", "/changed?pool=chunked", "/text?pool=mid", "/ignored", "/as-is"):
        for _ in range(3):
            assert request(sluice.port, "GET", target, timeout=30).status in (200, 203)
    assert_quiescent(sluice)


def test_a_reload_and_a_drain_during_a_streamed_body(sluice, make_backend, tmp_path):
    """A reload that recompiles the handler while a slow client reads a streamed 20 MiB body:
    it comes whole (the relay's exchanges hold the old generation), new requests get the new
    code. Then SIGTERM while another is under way: the drain lets it finish, and sluice exits
    0 with no buffer in use."""
    import re
    from client import connect, read_response
    start(sluice, make_backend, tmp_path)
    slow = connect(sluice.port, timeout=30, rcvbuf=4096)
    slow.sendall(b"GET /changed HTTP/1.1\r\nHost: a\r\n\r\n")
    time.sleep(0.3)
    (tmp_path / "edge.js").write_text(HANDLER.replace('Response.text("small")', 'Response.text("new")'))
    mark = sluice.mark()
    sluice.signal(1)  # SIGHUP
    sluice.wait_for_line(re.compile(r"reloaded .*generation 2"), start=mark, timeout=10)
    assert request(sluice.port, "GET", "/small", timeout=10).body == b"new"
    r = read_response(slow, timeout=30)
    assert r.status == 203 and sha(r.body) == BIG_SHA
    slow.close()
    slow = connect(sluice.port, timeout=30, rcvbuf=4096)
    slow.sendall(b"GET /as-is HTTP/1.1\r\nHost: a\r\n\r\n")
    assert slow.recv(4096).startswith(b"HTTP/1.1 200")
    sluice.signal(15)  # SIGTERM: a drain
    time.sleep(0.2)
    rest = read_to_close(slow)
    assert len(rest) > (20 << 20) - 8192 and BIG.endswith(rest[-4096:]), len(rest)
    slow.close()
    assert sluice.wait(20) == 0
    assert "buffers_in_use=0" in sluice.stderr_text()


def test_an_h2_stream_reset_mid_body_frees_the_fetch(sluice, make_backend, tmp_path):
    """An h2 client resets its stream after some DATA: the relay's sub-exchange is aborted (the
    backend's send fails), and the connection's other streams go on."""
    from h2client import H2Client
    counted = Counted(64 << 20)
    start(sluice, make_backend, tmp_path, big=counted, args=["--http2", "on"])
    c = H2Client.plain(sluice.port)
    sid = c.request("GET", "/as-is")
    deadline = time.time() + 10
    while len(c.responses.get(sid).body if sid in c.responses else b"") < 1 << 20 and time.time() < deadline:
        c.pump_once()
    c.conn.reset_stream(sid)
    c.flush()
    deadline = time.time() + 5
    while not counted.failed and time.time() < deadline:
        time.sleep(0.05)
    assert counted.failed
    other = c.request("GET", "/small")
    assert c.wait(other, timeout=10)[other].body == b"small"
    c.close()
    assert_quiescent(sluice)
