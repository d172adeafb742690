"""`fetch` to pools from a JavaScript handler (issue 25, item 2; docs/ARCHITECTURE.md, "`fetch`
to pools"): the handler's call suspends while a sub-request goes through the pool's own
balancing and retries, the worker serves others meanwhile, and the promise settles with a
Response the handler reads, changes or returns. Real backends, both I/O backends."""

import re
import socket
import threading
import time

import pytest

from backends import Behaviour, RefusingPort, chunked, echo, fixed, reset, route, slow_head
from client import request
from conftest import REPO
from test_admin import ADMIN_RE, scrape, value
from test_readme import readme_handlers

HANDLER = r"""
export default async function handler(request) {
  const path = request.path;
  if (path === "/auth") {
    const token = request.headers.authorization ?? "";
    const auth = await fetch("http://auth/check", { headers: { authorization: token } });
    if (!auth.ok) return Response.json({ denied: auth.status }, { status: 401 });
    const { user } = await auth.json();
    return Response.proxy("app", { headers: { "x-user": user } });
  }
  if (path === "/changed") {
    const r = await fetch("http://app/page?x=1");
    const headers = new Headers(r.headers);
    headers.set("x-edge", "changed");
    headers.delete("x-backend");
    return new Response(r.body, { status: 203, headers });
  }
  if (path === "/as-is") return fetch("http://app/as-is");
  if (path === "/both") {
    const [a, b] = await Promise.all([fetch("http://app/one"), fetch("http://auth/two")]);
    const [ja, jb] = await Promise.all([a.json(), b.json()]);
    return Response.json({ a: ja.target, b: jb.target, statusText: a.statusText, url: a.url });
  }
  if (path === "/post") {
    const r = await fetch("http://app/echo", { method: "post", body: "héllo", headers: new Headers({ "content-type": "text/plain" }) });
    const echoed = await r.json();
    return Response.json({ method: echoed.method, body: echoed.body, framing: echoed.framing });
  }
  if (path === "/post-big") {
    // A request body larger than a buffer, sent a window at a time out of the request's heap;
    // the echo's answer (its length and digest) is returned as it is.
    const n = Number(request.query.n);
    const bytes = new Uint8Array(n);
    for (let i = 0; i < n; i++) bytes[i] = i % 251;
    const pool = request.query.pool ?? "app";
    if (request.query.twice === undefined) return fetch(`http://${pool}/echo`, { method: "PUT", body: bytes });
    const [a, b] = await Promise.all([fetch("http://app/a", { method: "POST", body: bytes }), fetch("http://auth/b", { method: "POST", body: bytes.subarray(1) })]);
    const [ja, jb] = await Promise.all([a.json(), b.json()]);
    return Response.json([[ja.body_len, ja.body_sha256, ja.framing], [jb.body_len, jb.body_sha256, jb.framing]]);
  }
  if (path === "/tamper") {
    // Where a fetched body is and whether it was read are sluice's, out of the script's
    // reach: its writes to names like them are plain properties that change nothing.
    const [a, b] = await Promise.all([fetch("http://app/a"), fetch("http://app/b")]);
    const seen = [Object.getOwnPropertyNames(a.body), Object.getOwnPropertyNames(request), a.body["#slot"], request["#body"]];
    for (const key of ["#slot", "#state", "#framing", "#response", "#bytes"]) {
      delete a.body[key];
      a.body[key] = b.body[key] ?? 0;
    }
    request["#body"] = 0;
    const first = await a.text();
    let again;
    try { await a.text(); again = "read twice"; } catch (e) { again = e.name; }
    return Response.json({ seen, target: JSON.parse(first).target, again, second: (await b.json()).target });
  }
  if (path === "/trailing") return fetch("http://trailing/x");
  if (path === "/trailing-read") return Response.text(await (await fetch("http://trailing/x")).text());
  if (path === "/down") {
    try {
      await fetch("http://down/x");
      return Response.text("unexpected");
    } catch (e) {
      return Response.text(e.name + ": " + e.message, { status: 502 });
    }
  }
  if (path === "/refused") {
    const urls = ["http://nope/x", "https://app/x", "http://app:8080/x", "ftp://app/x", "http://u@app/x"];
    const settled = await Promise.allSettled(urls.map((u) => fetch(u)));
    const more = await Promise.allSettled([fetch("http://app/", { method: "GET", body: "x" }), fetch("http://app/", { method: "CONNECT" })]);
    return Response.json(settled.concat(more).map((s) => s.status + ": " + (s.reason ? s.reason.name + ": " + s.reason.message : "")));
  }
  if (path === "/many") {
    const settled = await Promise.allSettled([1, 2, 3].map((i) => fetch("http://app/n" + i)));
    return Response.json(settled.map((s) => s.status === "fulfilled" ? s.value.status : s.reason.message));
  }
  if (path === "/slow") {
    const r = await fetch("http://slow/x");
    return Response.text("late " + r.status);
  }
  if (path === "/big") {
    try {
      const r = await fetch("http://big/x");
      return Response.text("got " + (await r.arrayBuffer()).byteLength);
    } catch (e) {
      return Response.text(e.message, { status: 507 });
    }
  }
  return Response.text("sync");
}
"""

SITE = """\
.{
    .listen = "127.0.0.1:0",
    .admin = .{ .listen = "127.0.0.1:0" },
    .handlers = .{ .edge = .{ .file = "edge.js", .deadline = "DEADLINE", .fetch_max = 2, .memory = "1MiB" } },
    .pools = .{
        .app = .{ .backends = .{"APP"} },
        .auth = .{ .backends = .{"AUTH"} },
        .down = .{ .backends = .{"DOWN"} },
        .slow = .{ .backends = .{"SLOW"} },
        .big = .{ .backends = .{"BIG"} },
        .flaky = .{ .backends = .{ "RESETS", "ECHOES" } },
        .trailing = .{ .backends = .{"TRAILING"} },
    },
    .routes = .{ .{ .handler = "edge" } },
}
"""

AUTH = route({
    "/check": fixed(200, headers=[("Content-Type", "application/json")], body=b'{"user":"ann"}'),
})


def start(sluice, make_backend, tmp_path, deadline="2s", workers=1, slow_seconds=3.0, args=()):
    """sluice with the handler above and its five pools: app (echo), auth (a 200 with a user
    for /check, echo otherwise), down (refusing), slow (answers after `slow_seconds`) and big
    (a 2 MiB body, more than the handler's memory). Returns (admin port, backends)."""
    app = make_backend(name="app1")
    auth = make_backend(AUTH, name="auth1")
    slow = make_backend(slow_head(slow_seconds, fixed(200, body=b"slow")), name="slow1")
    big = make_backend(fixed(200, body=b"b" * (2 << 20)), name="big1")
    down = RefusingPort()
    resets = make_backend(reset(), name="resets1")
    echoes = make_backend(name="echoes1")
    trailing = make_backend(chunked([b"gr", b"pc"], trailers=[("Grpc-Status", "0"), ("Grpc-Message", "ok")]), name="trailing1")
    (tmp_path / "edge.js").write_text(HANDLER)
    config = tmp_path / "site.zon"
    config.write_text(SITE.replace("DEADLINE", deadline).replace("APP", app.address)
                      .replace("AUTH", auth.address).replace("DOWN", down.address)
                      .replace("SLOW", slow.address).replace("BIG", big.address)
                      .replace("RESETS", resets.address).replace("ECHOES", echoes.address)
                      .replace("TRAILING", trailing.address))
    sluice.start_config(config, workers=workers, args=args)
    admin = int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))
    return admin, {"app": app, "auth": auth, "slow": slow, "big": big, "down": down, "resets": resets, "echoes": echoes}


def failures(admin_port, reason):
    return value(scrape(admin_port), "sluice_handler_failures_total", handler="edge", reason=reason)


def header(echoed, name):
    return [v for k, v in echoed["headers"] if k.lower() == name]


def test_an_auth_subrequest_then_the_proxied_app(sluice, make_backend, tmp_path):
    """The handler asks the auth pool with the client's token, reads its JSON, then hands the
    request to the app pool with the user it learned: the auth backend saw the token and the
    forwarding fields of the original client (and its Host), the app saw the user."""
    _, backends = start(sluice, make_backend, tmp_path)
    r = request(sluice.port, "GET", "/auth", headers=[("Authorization", "Bearer good")])
    assert r.status == 200, r
    app_saw = r.json()
    assert header(app_saw, "x-user") == ["ann"]
    checked = backends["auth"].requests[-1]
    assert checked.target == "/check"
    assert checked.header("authorization") == "Bearer good"
    assert checked.header("x-forwarded-for") == "127.0.0.1"
    assert checked.header("host") == "sluice.test"  # The client's Host, not the pool's name.
    assert checked.header("x-forwarded-host") == "sluice.test"


def test_behind_a_trusted_proxy_the_subrequest_carries_the_forwarding_chain(sluice, make_backend, tmp_path):
    """From a trusted proxy, the sub-request's X-Forwarded-For is the client request's chain
    with the proxy's address appended, as the proxied request's is; its other forwarding
    fields are the client request's."""
    _, backends = start(sluice, make_backend, tmp_path, args=["--trusted-proxy", "127.0.0.1/32"])
    r = request(sluice.port, "GET", "/auth", headers=[("Authorization", "Bearer good"),
                                                       ("X-Forwarded-For", "203.0.113.7"),
                                                       ("X-Forwarded-Proto", "https")])
    assert r.status == 200, r
    checked = backends["auth"].requests[-1]
    assert checked.header("x-forwarded-for") == "203.0.113.7, 127.0.0.1"
    assert checked.header("x-forwarded-proto") == "https"
    assert header(r.json(), "x-forwarded-for") == ["203.0.113.7, 127.0.0.1"]


def test_a_fetched_answer_with_changed_headers_or_as_it_is(sluice, make_backend, tmp_path):
    """`new Response(r.body, { status, headers })` with a header added and one removed, and a
    fetched Response returned as it is: the client gets the backend's bytes and fields, less
    the ones sluice writes itself."""
    start(sluice, make_backend, tmp_path)
    r = request(sluice.port, "GET", "/changed")
    assert r.status == 203, r
    assert r.header("x-edge") == "changed"
    assert r.header("x-backend") is None
    assert r.header("content-type") == "application/json"
    assert r.json()["target"] == "/page?x=1"
    r = request(sluice.port, "GET", "/as-is")
    assert r.status == 200, r
    assert r.header("x-backend") == "app1"
    assert r.json()["target"] == "/as-is"


def test_a_fetched_bodys_state_is_out_of_the_scripts_reach(sluice, make_backend, tmp_path):
    """The body stream's slot, state and framing are kept under keys no script string names:
    the script sees no own properties on it (nor the request's body state), and deleting or
    writing "#slot" or "#state" neither makes one fetch's body read another's nor lets a body
    be read twice."""
    start(sluice, make_backend, tmp_path)
    r = request(sluice.port, "GET", "/tamper")
    assert r.status == 200, r
    assert r.json() == {"seen": [[], ["method", "path", "query", "target", "headers", "ip", "body", "json", "text", "arrayBuffer"], None, None],
                        "target": "/a", "again": "TypeError", "second": "/b"}


def test_promise_all_of_two_pools_runs_them_at_once(sluice, make_backend, tmp_path):
    """Two fetches under Promise.all, to two pools, both answered; a POST with a body and a
    Headers object; the Response's statusText and url."""
    start(sluice, make_backend, tmp_path)
    r = request(sluice.port, "GET", "/both")
    assert r.status == 200, r
    assert r.json() == {"a": "/one", "b": "/two", "statusText": "OK", "url": "http://app/one"}
    r = request(sluice.port, "GET", "/post")
    assert r.json() == {"method": "POST", "body": "h\u00c3\u00a9llo", "framing": "length"}, r.json()


def test_a_request_body_larger_than_a_buffer_is_sent_in_windows(sluice, make_backend, tmp_path):
    """A fetch's body larger than a buffer (40 KB to 400 KB, from a 1 MiB heap) reaches
    the pool whole and in order with its Content-Length: it is sent a window at a time through
    the sub-request's buffer. Two such fetches at once, to two pools, both arrive whole. A try
    that the backend resets after the whole body is replayed to the next backend from the
    body's first byte (read again from the heap)."""
    import hashlib
    import json
    admin_and_backends = start(sluice, make_backend, tmp_path)
    for n in (40000, 65537, 400000):
        expected = bytes(i % 251 for i in range(n))
        r = request(sluice.port, "GET", "/post-big?n=%d" % n, timeout=30)
        assert r.status == 200, r
        echoed = r.json()
        assert echoed["method"] == "PUT" and echoed["framing"] == "length", echoed
        assert (echoed["body_len"], echoed["body_sha256"]) == (n, hashlib.sha256(expected).hexdigest())
        assert ["Content-Length", str(n)] in echoed["headers"]
    _, backends = admin_and_backends
    for _ in range(2):  # Whichever member the balancer starts with, one try meets the reset.
        r = request(sluice.port, "GET", "/post-big?n=100000&pool=flaky", timeout=30)
        assert r.status == 200, r
        assert (r.json()["body_len"], r.json()["body_sha256"]) == (100000, hashlib.sha256(bytes(i % 251 for i in range(100000))).hexdigest())
    # The reset came after the whole body: the replay sent it again from the heap.
    reset_bodies = [len(req.body) for req in backends["resets"].requests]
    assert reset_bodies and set(reset_bodies) == {100000}, reset_bodies
    # The echo's answers are JSON with the bodies in them, parsed in the handler's 1 MiB.
    n = 40000
    expected = bytes(i % 251 for i in range(n))
    r = request(sluice.port, "GET", "/post-big?n=%d&twice" % n, timeout=30)
    assert r.status == 200, r
    assert json.loads(r.body) == [[n, hashlib.sha256(expected).hexdigest(), "length"],
                                  [n - 1, hashlib.sha256(expected[1:]).hexdigest(), "length"]]


def test_a_returned_fetched_body_keeps_its_trailers_for_a_client_that_takes_them(sluice, make_backend, tmp_path):
    """A pool's chunked answer with a trailer section (gRPC's status is there), returned by the
    handler as it is: an HTTP/1.1 client that sent `TE: trailers` gets the trailer fields, one
    that did not gets the body without them, and an HTTP/2 client with `te: trailers` gets them
    as the stream's closing HEADERS. A body the handler reads is its data alone."""
    from h2client import H2Client
    start(sluice, make_backend, tmp_path, args=["--http2", "on"])
    r = request(sluice.port, "GET", "/trailing", headers=[("TE", "trailers")])
    assert r.status == 200 and r.body == b"grpc", r
    assert ("Grpc-Status", "0") in r.trailers and ("Grpc-Message", "ok") in r.trailers, r.trailers
    r = request(sluice.port, "GET", "/trailing")
    assert r.status == 200 and r.body == b"grpc" and r.trailers == [], r.trailers
    c = H2Client.plain(sluice.port)
    sid = c.request("GET", "/trailing", headers=[("te", "trailers")])
    response = c.wait(sid)[sid]
    assert response.body == b"grpc", response
    assert ("grpc-status", "0") in response.trailers, response.trailers
    c.close()
    r = request(sluice.port, "GET", "/trailing-read", headers=[("TE", "trailers")])
    assert r.status == 200 and r.body == b"grpc", r


def test_a_pool_that_gives_no_response_rejects_with_a_type_error(sluice, make_backend, tmp_path):
    """A pool whose only backend refuses connections: the fetch rejects with a TypeError that
    names the pool and sluice's failure, which the handler catches; mistakes in the URL or the
    init are rejections that say what is wrong."""
    start(sluice, make_backend, tmp_path)
    r = request(sluice.port, "GET", "/down")
    assert r.status == 502, r
    assert r.body.startswith(b'TypeError: fetch: pool "down" gave no response: 502 upstream_refused'), r.body
    r = request(sluice.port, "GET", "/refused")
    assert r.status == 200, r
    reasons = r.json()
    assert reasons[0].startswith('rejected: TypeError: fetch: no pool is named "nope" (pools: '), reasons
    assert "https:// is not for pools" in reasons[1]
    assert "may not name a port" in reasons[2]
    assert "only http://POOL/path URLs" in reasons[3]
    assert "user or password" in reasons[4]
    assert reasons[5] == "rejected: TypeError: fetch: Request with GET/HEAD method cannot have body."
    assert reasons[6] == "rejected: TypeError: fetch: 'CONNECT' HTTP method is unsupported."


def test_no_more_fetches_in_flight_than_fetch_max(sluice, make_backend, tmp_path):
    """fetch_max = 2: of three fetches started together, the third is rejected with a message
    naming the setting, the other two are answered."""
    start(sluice, make_backend, tmp_path)
    r = request(sluice.port, "GET", "/many")
    assert r.json() == [200, 200, "fetch: this request already has 2 fetches in flight (the handler's fetch_max)"]


def test_a_response_over_the_handlers_memory_rejects(sluice, make_backend, tmp_path):
    """A 2 MiB body into a handler with 1 MiB of memory: the fetch rejects with a message
    saying so, and the worker serves on."""
    start(sluice, make_backend, tmp_path)
    r = request(sluice.port, "GET", "/big", timeout=10)
    assert r.status == 507, r
    assert b"more than the handler's memory holds" in r.body
    assert request(sluice.port, "GET", "/as-is").status == 200


def test_the_deadline_ends_a_request_waiting_on_a_slow_fetch(sluice, make_backend, tmp_path):
    """A 300 ms deadline and a pool that answers after 3 s: the client gets the handler's 500
    at about the deadline, the sub-request is given up, and the worker serves on meanwhile."""
    admin, _ = start(sluice, make_backend, tmp_path, deadline="300ms")
    started = time.monotonic()
    r = request(sluice.port, "GET", "/slow", timeout=10)
    elapsed = time.monotonic() - started
    assert r.status == 500, r
    assert 0.25 <= elapsed < 1.5, elapsed
    assert failures(admin, "deadline") == 1
    assert request(sluice.port, "GET", "/").body == b"sync"


def test_a_client_that_leaves_while_its_fetch_flies(sluice, make_backend, tmp_path):
    """Clients that close while their handler waits on a slow pool: each call is abandoned at
    once, its sub-request aborted (nothing settles into a dead exchange), and the worker serves
    on, also after the slow answers would have come."""
    admin, backends = start(sluice, make_backend, tmp_path, slow_seconds=1.0)
    for _ in range(3):
        s = socket.create_connection(("127.0.0.1", sluice.port))
        s.sendall(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(0.1)
        s.close()
    deadline = time.monotonic() + 0.5
    while failures(admin, "abandoned") < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert failures(admin, "abandoned") == 3
    time.sleep(1.2)  # Past the slow answers.
    assert request(sluice.port, "GET", "/both").status == 200
    assert sluice.running()


def test_http2_streams_fetch_side_by_side(sluice, make_backend, tmp_path):
    """Ten HTTP/2 streams on one connection each fetch from two pools at once: all answered;
    a stream the client resets while its fetch waits on the slow pool is abandoned at once,
    its sub-request given up."""
    from h2client import H2Client
    admin, _ = start(sluice, make_backend, tmp_path, args=["--http2", "on"], slow_seconds=1.0)
    c = H2Client.plain(sluice.port)
    sids = [c.request("GET", "/both") for _ in range(10)]
    reset = c.request("GET", "/slow")
    time.sleep(0.1)
    c.conn.reset_stream(reset)
    c.flush()
    responses = c.wait(*sids)
    assert [r.status for r in responses.values()] == [200] * 10, responses
    assert all(b'"a":"/one"' in r.body for r in responses.values())
    deadline = time.monotonic() + 0.5
    while failures(admin, "abandoned") < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert failures(admin, "abandoned") == 1
    c.close()


@pytest.mark.time_limit(120)
def test_no_heap_allocations_per_fetch(sluice, make_backend, tmp_path):
    """Requests whose handlers fetch (one pool, two at once, a POST, a refusing pool, a
    rejection, an auth sub-request then a proxy) leave heap_allocations_after_startup
    unchanged, on two workers."""
    start(sluice, make_backend, tmp_path, workers=2)
    targets = [("/changed", 203), ("/both", 200), ("/post", 200), ("/down", 502), ("/many", 200),
               ("/auth", 200), ("/as-is", 200)]

    def load(rounds):
        errors = []

        def worker(offset):
            for i in range(rounds):
                target, expected = targets[(i + offset) % len(targets)]
                r = request(sluice.port, "GET", target, headers=[("Authorization", "Bearer good")], timeout=10)
                if r.status != expected:
                    errors.append((target, r.status))

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, errors[:3]

    load(15)
    before = sluice.stats()
    load(40)
    after = sluice.stats()
    key = "heap_allocations_after_startup"
    assert after[key] == before[key], (before, after)


class Verify(Behaviour):
    """An auth service: 200 with the user for `Bearer good`, 403 otherwise."""

    def on_request(self, conn, req):
        if req.header("authorization") == "Bearer good":
            conn.respond(req, 200, [("Content-Type", "application/json")], b'{"user":"ann"}')
        else:
            conn.respond(req, 403, [("Content-Type", "application/json")], b'{"user":null}')
        return True


def test_the_auth_example_checks_then_answers_with_its_own_headers(sluice, make_backend, tmp_path):
    """examples/handlers/auth.js (the README's) with auth.zon, its addresses made local: a caller the auth pool
    refuses gets the handler's 401 and the app never hears of it; one it knows gets the app's
    answer (method, target with its query, body) with `x-user` and `cache-control` set and the
    app's `server` removed, from both app backends in turn."""
    examples = REPO / "examples" / "handlers"
    source = (examples / "auth.js").read_text()
    # The README's auth.js is the same handler, under a comment of its own.
    assert source.split("\n", 3)[3] == readme_handlers()["auth.js"].split("\n", 1)[1]
    (tmp_path / "auth.js").write_text(source)
    auth = make_backend(Verify(), name="auth")
    apps = [make_backend(echo(extra_headers=[("Server", "app/1.0")]), name=f"app{i}") for i in (1, 2)]
    text = (examples / "auth.zon").read_text().replace('"0.0.0.0:8080"', '"127.0.0.1:0"')
    text = text.replace('"10.0.0.9:7000"', f'"{auth.address}"').replace('"10.0.0.7:8000"', f'"{apps[0].address}"')
    text = text.replace('"10.0.0.8:8000"', f'"{apps[1].address}"')
    assert not re.search(r'"10\.0\.', text)
    (tmp_path / "auth.zon").write_text(text)
    sluice.start_config(tmp_path / "auth.zon")
    r = request(sluice.port, "GET", "/account?id=7")
    assert (r.status, r.json()) == (401, {"error": "unauthorized"}), r
    assert not any(app.requests for app in apps)
    seen = set()
    for _ in range(2):
        r = request(sluice.port, "POST", "/orders?id=7", headers=[("Authorization", "Bearer good")], body=b"two apples")
        assert r.status == 200, r
        assert (r.header("x-user"), r.header("cache-control"), r.header("server")) == ("ann", "private, no-store", None)
        echoed = r.json()
        assert (echoed["method"], echoed["target"], echoed["body"]) == ("POST", "/orders?id=7", "two apples")
        assert header(echoed, "x-user") == ["ann"]
        assert header(echoed, "authorization") == []  # The app hears the user, not the token.
        seen.add(echoed["backend"])
    assert seen == {"app1", "app2"}
    assert auth.requests[-1].header("authorization") == "Bearer good"
