"""`Request` in JavaScript handlers (issue 25, the Web APIs; docs/JS.md, "Web APIs"): a
handler's own `request` is `instanceof Request` and reads its body through
`Request.prototype.text()`/`json()`; `fetch(new Request(...))` sends the Request's method,
target, fields and body to the pool, `init` replacing its members; the handler's own request
is not a URL fetch can send (a TypeError that says what to write). Real backends, both I/O
backends, and the heap allocation counter unchanged over such requests."""

import threading

from backends import echo
from client import request

HANDLER = r"""
export default async function handler(request) {
  const path = request.path;
  if (path === "/instance") {
    return Response.json({
      instance: request instanceof Request,
      tag: Object.prototype.toString.call(request),
      text: await request.text(),
      json: request.method === "POST" ? await request.json() : null,
    });
  }
  if (path === "/fetch-request") {
    const r = new Request("http://app/echo?x=1", { method: "PUT", body: "h\u00e9", headers: { "x-a": "1" } });
    const echoed = await (await fetch(r)).json();
    return Response.json({ method: echoed.method, target: echoed.target, body: echoed.body, headers: echoed.headers });
  }
  if (path === "/fetch-request-init") {
    const base = new Request("http://app/a", { method: "POST", body: "one", headers: { "x-a": "1" } });
    const echoed = await (await fetch(base, { method: "PATCH", body: new Uint8Array([50, 51]), headers: new Headers({ "x-b": "2" }) })).json();
    return Response.json({ method: echoed.method, target: echoed.target, body: echoed.body, headers: echoed.headers });
  }
  if (path === "/fetch-form") {
    const echoed = await (await fetch("http://app/f", { method: "POST", body: new URLSearchParams({ a: "1", b: "x y" }) })).json();
    return Response.json({ body: echoed.body, headers: echoed.headers });
  }
  if (path === "/fetch-clone") {
    const base = new Request("http://app/c?q", { headers: { "x-c": "3" } });
    const [a, b] = await Promise.all([fetch(base), fetch(base.clone())]);
    const [ja, jb] = await Promise.all([a.json(), b.json()]);
    return Response.json([ja.method, ja.target, jb.method, jb.target]);
  }
  if (path === "/own") {
    try {
      await fetch(request);
      return Response.text("unexpected");
    } catch (e) {
      return Response.text(e.name + ": " + e.message, { status: 400 });
    }
  }
  if (path === "/forward") {
    // The fields sluice writes itself (Host, the forwarding ones) are left to it.
    const headers = Object.fromEntries(Object.entries(request.headers).filter(([k]) => k.startsWith("x-")));
    const r = new Request("http://app" + request.target, { method: request.method, headers });
    return fetch(r);
  }
  return Response.text("ok");
}
"""

SITE = """\
.{
    .listen = "127.0.0.1:0",
    .handlers = .{ .edge = .{ .file = "edge.js", .deadline = "2s", .fetch_max = 2 } },
    .pools = .{ .app = .{ .backends = .{"APP"} } },
    .routes = .{ .{ .handler = "edge" } },
}
"""


def start(sluice, make_backend, tmp_path, workers=1):
    app = make_backend(echo(), name="app1")
    (tmp_path / "edge.js").write_text(HANDLER)
    config = tmp_path / "site.zon"
    config.write_text(SITE.replace("APP", app.address))
    sluice.start_config(config, workers=workers)
    return app


def fields(echoed, *names):
    return [[k, v] for k, v in echoed["headers"] if k.lower() in names]


def test_the_handlers_request_is_a_request(sluice, make_backend, tmp_path):
    """`request instanceof Request`, its tag, and its body through the prototype's text()
    and json() promises."""
    start(sluice, make_backend, tmp_path)
    r = request(sluice.port, "POST", "/instance", body=b'{"n":[1,2]}',
                headers=[("Content-Type", "application/json")])
    assert r.status == 200, r
    assert r.json() == {"instance": True, "tag": "[object Request]", "text": '{"n":[1,2]}', "json": {"n": [1, 2]}}
    r = request(sluice.port, "GET", "/instance")
    assert r.json() == {"instance": True, "tag": "[object Request]", "text": "", "json": None}


def test_fetch_sends_a_requests_method_target_fields_and_body(sluice, make_backend, tmp_path):
    """fetch(new Request(url, init)): the pool sees the Request's method, target, its field
    and the Content-Type its string body was given, and the body's UTF-8."""
    start(sluice, make_backend, tmp_path)
    echoed = request(sluice.port, "GET", "/fetch-request").json()
    assert echoed["method"] == "PUT"
    assert echoed["target"] == "/echo?x=1"
    assert echoed["body"] == "h\u00c3\u00a9"  # The UTF-8 of "hé", as the echo's Latin-1.
    assert fields(echoed, "x-a", "content-type") == [["x-a", "1"], ["content-type", "text/plain;charset=UTF-8"]]


def test_fetch_init_replaces_the_requests_members(sluice, make_backend, tmp_path):
    """fetch(request, init): init's method, fields and body replace the Request's (bytes get
    no Content-Type, a URLSearchParams its form type); a clone fetches as the original does."""
    start(sluice, make_backend, tmp_path)
    echoed = request(sluice.port, "GET", "/fetch-request-init").json()
    assert echoed["method"] == "PATCH"
    assert echoed["target"] == "/a"
    assert echoed["body"] == "23"
    assert fields(echoed, "x-a", "x-b", "content-type") == [["x-b", "2"]]
    assert request(sluice.port, "GET", "/fetch-clone").json() == ["GET", "/c?q", "GET", "/c?q"]
    # init's body gets the Content-Type the Fetch standard gives its kind.
    echoed = request(sluice.port, "GET", "/fetch-form").json()
    assert echoed["body"] == "a=1&b=x+y"
    assert fields(echoed, "content-type") == [["content-type", "application/x-www-form-urlencoded;charset=UTF-8"]]


def test_the_handlers_own_request_is_not_fetched_but_can_be_rebuilt(sluice, make_backend, tmp_path):
    """fetch(request) of the handler's own request rejects with a TypeError that says what to
    write instead; a Request rebuilt from its target, method and fields goes to the pool."""
    app = start(sluice, make_backend, tmp_path)
    r = request(sluice.port, "GET", "/own")
    assert r.status == 400, r
    assert r.body.startswith(b"TypeError: fetch: the handler's own request names no pool"), r.body
    r = request(sluice.port, "GET", "/forward?z=1", headers=[("X-Q", "q")])
    assert r.status == 200, r
    assert r.json()["target"] == "/forward?z=1"
    assert app.requests[-1].header("x-q") == "q"


def test_no_heap_allocations_per_request_with_requests(sluice, make_backend, tmp_path):
    """Requests that build Requests, fetch them and read bodies leave the heap allocation
    counter unchanged over 2,000 requests on two workers."""
    start(sluice, make_backend, tmp_path, workers=2)
    targets = ["/instance", "/fetch-request", "/fetch-request-init", "/fetch-clone", "/fetch-form", "/own"]

    def load(rounds):
        errors = []

        def worker(offset):
            for i in range(rounds):
                target = targets[(i + offset) % len(targets)]
                r = request(sluice.port, "GET", target, timeout=10)
                if r.status != (400 if target == "/own" else 200):
                    errors.append((target, r.status))

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors, errors[:3]

    load(25)
    before = sluice.stats()
    load(500)
    after = sluice.stats()
    key = "heap_allocations_after_startup"
    assert after[key] == before[key], (before, after)
