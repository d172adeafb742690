"""Keep-alive and pipelining, on the client side and towards the backends."""

import json
import time

import pytest

from backends import echo, keepalive_then_close_after, slow_head
from client import Client, Deadline, Echoed, build_request, request


def test_100_sequential_requests_one_connection(sluice, backend):
    """100 requests one after another on one client connection all succeed, in order."""
    sluice.start([backend])
    with Client(sluice.port) as c:
        for i in range(100):
            e = Echoed(c.request("GET", f"/seq/{i}"))
            assert e.target == f"/seq/{i}"
    assert len(backend.requests) == 100


def test_pipelined_requests_answered_in_order(sluice, backend):
    """10 requests written in one send come back as 10 responses in request order."""
    sluice.start([backend])
    with Client(sluice.port) as c:
        c.send(b"".join(build_request("GET", f"/pipe/{i}") for i in range(10)))
        targets = [Echoed(c.read_response()).target for _ in range(10)]
    assert targets == [f"/pipe/{i}" for i in range(10)]
    assert sorted(r.target for r in backend.requests) == sorted(targets)


def test_pipelined_mixed_methods_and_bodies(sluice, backend):
    """Pipelined GET, POST with Content-Length, chunked POST and HEAD in one send: each
    response matches its request (a HEAD response has no body), in order."""
    sluice.start([backend])
    batch = (build_request("GET", "/m/0")
             + build_request("POST", "/m/1", body=b"first body")
             + build_request("POST", "/m/2", headers=[("Transfer-Encoding", "chunked")],
                             body=b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
             + build_request("HEAD", "/m/3")
             + build_request("GET", "/m/4"))
    with Client(sluice.port) as c:
        c.send(batch)
        r0 = Echoed(c.read_response())
        r1 = Echoed(c.read_response())
        r2 = Echoed(c.read_response())
        r3 = c.read_response("HEAD")
        r4 = Echoed(c.read_response())
    assert (r0.target, r0.body) == ("/m/0", b"")
    assert (r1.target, r1.body) == ("/m/1", b"first body")
    assert (r2.target, r2.body) == ("/m/2", b"hello world")
    assert r3.status == 200 and r3.body == b""
    assert r4.target == "/m/4"


def test_client_connection_close(sluice, backend):
    """`Connection: close` from the client: the response arrives, then sluice closes."""
    sluice.start([backend])
    with Client(sluice.port) as c:
        e = Echoed(c.request("GET", "/bye", headers=[("Connection", "close")]))
        assert e.target == "/bye"
        assert c.wait_closed(2.0), "sluice kept the connection open after Connection: close"


def test_backend_connection_close_keeps_client_connection(sluice, make_backend):
    """`Connection: close` from the backend ends that upstream connection only: the
    HTTP/1.1 client connection stays open and its next request works (on a new upstream
    connection)."""
    b = make_backend(echo(close=True))
    sluice.start([b])
    with Client(sluice.port) as c:
        r1 = c.request("GET", "/one")
        assert Echoed(r1).target == "/one"
        assert "close" not in r1.connection_tokens(), \
            f"the backend's Connection: close was passed to the client: {r1.headers}"
        e2 = Echoed(c.request("GET", "/two"))
        assert e2.target == "/two"
    assert b.connections == 2


def test_http10_client_without_keepalive_gets_close(sluice, backend):
    """An HTTP/1.0 request without `Connection: keep-alive`: response, then close."""
    sluice.start([backend])
    with Client(sluice.port) as c:
        c.send(b"GET /old HTTP/1.0\r\nHost: sluice.test\r\n\r\n")
        r = c.read_response()
        assert Echoed(r).target == "/old"
        assert not r.header("transfer-encoding"), \
            f"chunked sent to an HTTP/1.0 client: {r.headers}"
        assert c.wait_closed(2.0), "connection left open for an HTTP/1.0 client"


def test_upstream_connections_reused(sluice, backend):
    """Upstream keep-alive: 50 requests on one client connection use at most 2 backend
    connections."""
    sluice.start([backend])
    with Client(sluice.port) as c:
        for i in range(50):
            assert Echoed(c.request("GET", f"/pool/{i}")).target == f"/pool/{i}"
    assert backend.connections <= 2, f"{backend.connections} upstream connections for 50 requests"


def test_upstream_connections_reused_across_client_connections(sluice, backend):
    """The upstream pool outlives client connections: 30 sequential client connections
    (one request each) use at most 2 backend connections."""
    sluice.start([backend])
    for i in range(30):
        assert Echoed(request(sluice.port, "GET", f"/pool/{i}")).target == f"/pool/{i}"
    assert backend.connections <= 2, f"{backend.connections} upstream connections for 30 requests"


@pytest.mark.parametrize("mode", ["after_response", "on_next_request"])
def test_stale_pooled_connection_retried(sluice, make_backend, mode):
    """A backend that silently drops kept-alive connections (right after a response, or
    when the next request arrives) never turns a GET into an error: a request that fails
    on a reused connection before any response byte is retried once on a new one."""
    b = make_backend(keepalive_then_close_after(1, mode=mode))
    sluice.start([b])
    with Client(sluice.port) as c:
        for i in range(10):
            r = c.request("GET", f"/stale/{i}")
            assert r.status == 200, f"request {i}: {r!r}"
            assert Echoed(r).target == f"/stale/{i}"
            if mode == "after_response" and i % 2:
                time.sleep(0.05)  # sometimes let the close land before the next request
    # each connection answers only once, so every request needed a connection of its own
    assert b.connections >= 10


def test_idle_client_connection_then_request(sluice, backend):
    """A client connection idle for a while (well under --client-idle-timeout) still
    works."""
    sluice.start([backend], args=["--client-idle-timeout", "5s"])
    with Client(sluice.port) as c:
        assert Echoed(c.request("GET", "/a")).target == "/a"
        time.sleep(1.0)
        assert Echoed(c.request("GET", "/b")).target == "/b"


def test_client_idle_timeout_closes(sluice, backend):
    """An idle keep-alive client connection is closed after --client-idle-timeout."""
    sluice.start([backend], args=["--client-idle-timeout", "1s"])
    with Client(sluice.port) as c:
        assert Echoed(c.request("GET", "/a")).target == "/a"
        t0 = time.monotonic()
        assert c.wait_closed(4.0), "idle connection still open 4s after a 1s idle timeout"
        assert time.monotonic() - t0 >= 0.5
        assert c.bsock.buf == b"" or c.bsock.buf.startswith(b"HTTP/1.1 408"), \
            f"unexpected bytes on idle close: {bytes(c.bsock.buf)!r}"


def test_pipelined_request_after_connection_close_not_processed(sluice, backend):
    """Requests pipelined after one with `Connection: close` are not processed (RFC 9112
    9.6): one response, then close, and the backend sees only the first request."""
    sluice.start([backend])
    with Client(sluice.port) as c:
        c.send(build_request("GET", "/first", headers=[("Connection", "close")])
               + build_request("GET", "/second"))
        assert Echoed(c.read_response()).target == "/first"
        assert c.wait_closed(2.0)
        assert c.bsock.buf == b"", f"more after the close response: {bytes(c.bsock.buf)!r}"
    time.sleep(0.1)
    assert [r.target for r in backend.requests] == ["/first"]


@pytest.mark.time_limit(20)
def test_abandoned_response_never_reaches_another_client(sluice, make_backend):
    """A client that disconnects while its response is still pending upstream: that
    upstream connection must not go back to the pool with the response in flight. A later
    request (on a new client connection) gets its own response, not the abandoned one."""
    b = make_backend(slow_head(0.6))
    sluice.start([b])
    for i in range(3):
        c = Client(sluice.port)
        c.send_request("GET", f"/abandoned/{i}")
        assert b.wait_for_requests(i + 1, 3.0), "the request never reached the backend"
        time.sleep(0.1)
        c.close()
    time.sleep(0.8)  # the abandoned responses are now sent (or discarded)
    for i in range(3):
        e = Echoed(request(sluice.port, "GET", f"/fresh/{i}", timeout=5))
        assert e.target == f"/fresh/{i}", f"got the response meant for {e.target}"
    assert sluice.running()


@pytest.mark.time_limit(30)
def test_idle_keepalive_connections_return_their_buffers(sluice, backend):
    """A connection waiting for its next request gives its buffer back after about a second
    idle (the stats line's buffers_in_use drops to 0 with 20 connections open), and every
    one of them is still served when it sends again."""
    sluice.start([backend])
    clients = [Client(sluice.port) for _ in range(20)]
    try:
        for i, c in enumerate(clients):
            assert Echoed(c.request("GET", f"/first/{i}")).target == f"/first/{i}"
        busy = sluice.stats()
        assert busy["connections_active"] == 20, busy
        deadline = Deadline(5.0)
        while True:
            stats = sluice.stats()
            if stats["buffers_in_use"] == 0:
                break
            deadline.check(f"idle connections still hold buffers: {stats}")
            time.sleep(0.2)
        assert stats["connections_active"] == 20, stats
        for i, c in enumerate(clients):
            assert Echoed(c.request("GET", f"/again/{i}")).target == f"/again/{i}"
    finally:
        for c in clients:
            c.close()


def test_a_first_post_never_goes_on_a_pooled_connection(sluice, make_backend):
    """The stale keep-alive race (a backend closing an idle connection as a request is sent on
    it, as uvicorn does after 5 s) cannot be retried for a POST: the backend may have
    processed it. So a client's first request on a connection, when it is not idempotent,
    goes on a backend connection of its own (HAProxy's `http-reuse safe`). This backend reads
    the second request on each connection and closes without answering: before, every POST
    after the first went on a pooled connection and got a 502."""
    b = make_backend(keepalive_then_close_after(1, mode="on_next_request"))
    sluice.start([b])
    for i in range(8):
        assert Echoed(request(sluice.port, "GET", f"/warm/{i}")).target == f"/warm/{i}"
        r = request(sluice.port, "POST", f"/post/{i}", body=b"x" * 100)
        assert r.status == 200, f"POST {i}: {r!r}"
        assert Echoed(r).target == f"/post/{i}"


def test_a_later_post_that_meets_the_race_closes_its_client_unanswered(sluice, make_backend, tmp_path):
    """A POST after the first on a client connection may use a pooled connection; when the
    backend closes that one without a response byte, sluice does what the backend did: it
    closes the client connection without answering (the client reused its connection, so it
    may send the request again, as it would to the backend itself), never a 502. Counted
    and logged with its reason."""
    from test_admin import scrape, start_with_admin, value
    b = make_backend(keepalive_then_close_after(1, mode="on_next_request"))
    path = tmp_path / "access.log"
    admin = start_with_admin(sluice, [b], args=["--access-log", str(path), "--access-log-format", "json"])
    unanswered = 0
    for i in range(4):
        with Client(sluice.port) as c:
            assert Echoed(c.request("GET", f"/first/{i}")).target == f"/first/{i}"
            # The GET's backend connection is pooled now, and the backend will close it on
            # the next request it reads.
            c.send_request("POST", f"/later/{i}", body=b"y" * 50)
            data = c.read_some(5.0)
            if data:
                assert data.startswith(b"HTTP/1.1 200"), data
            else:
                assert c.wait_closed(5.0)
                unanswered += 1
    assert unanswered == 4  # The backend closes each pooled connection on the POST.
    assert value(scrape(admin), "sluice_upstream_stale_closes_total", pool="default") == unanswered
    lines = []
    deadline = Deadline(5.0)
    while len(lines) < 8:
        lines = path.read_text().splitlines() if path.exists() else []
        deadline.check(f"access log lines: {lines}")
        time.sleep(0.05)
    reasons = [json.loads(line)["reason"] for line in lines]
    assert reasons.count("upstream_closed_reused_connection") == unanswered, reasons
    assert not any(json.loads(line)["status"] == 502 for line in lines), lines
