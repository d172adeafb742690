"""The Web APIs in a request handler (issue 25 §5; docs/JS.md "Web APIs"): `new Response(body,
init)` with a `Headers` (Set-Cookie's values on lines of their own, the fields sluice writes
refused at the call and again when the Response is written), `instanceof Response`, its
`text()` and `json()` promises, `atob`, `btoa`, `crypto.randomUUID`, `Headers`, `URL` and
`DataView` used by a handler, and a module's Headers and URLSearchParams sealed, on both I/O
backends."""

import re
import time
import uuid

from client import request

HANDLER = """\
export default async function handler(request) {
  const { path } = request;
  if (path === "/plain") return new Response("hello");
  if (path === "/empty") return new Response(null, { status: 204 });
  if (path === "/init") {
    const headers = new Headers({ "X-One": "1" });
    headers.append("set-cookie", "a=1");
    headers.append("Set-Cookie", "b=2");
    headers.append("x-one", "2");
    return new Response(JSON.stringify({ ok: true }), { status: 201, headers });
  }
  if (path === "/typed") return new Response("{}", { headers: [["content-type", "application/json"]] });
  if (path === "/changed") {
    const r = new Response("x", { headers: { a: "1" } });
    r.headers.set("a", "2");
    r.headers.delete("nope");
    return r;
  }
  if (path === "/self") {
    const r = new Response('{"n": 41}', { status: 202 });
    const n = (await r.json()).n + 1;
    return Response.json({ n, text: await r.text(), is: r instanceof Response, plain: Response.text("") instanceof Response, obj: {} instanceof Response, type: typeof Response });
  }
  if (path === "/bad-json") return Response.text(String(await new Response("{").json()));
  if (path === "/reserved") return new Response("x", { headers: { "Content-Length": "9" } });
  if (path === "/reserved-later") { const r = new Response("x"); r.headers.set("connection", "close"); return r; }
  if (path === "/bad-status") return new Response("x", { status: 600 });
  if (path === "/web") {
    const auth = request.headers["authorization"] ?? "";
    const [user, pass] = atob(auth.replace(/^Basic /, "")).split(":");
    return Response.json({ user, pass, token: btoa(user + "!"), id: crypto.randomUUID() });
  }
  if (path === "/helper-headers") {
    const h = new Headers([["set-cookie", "a=1"], ["set-cookie", "b=2"], ["x-k", "v"]]);
    return Response.json({ ok: 1 }, { status: 203, headers: h });
  }
  if (path === "/helper-reserved") return Response.text("x", { headers: new Headers({ connection: "close" }) });
  if (path.startsWith("/url/")) {
    const u = new URL(path + "?b=2&a=1", "http://Example.COM:80/base/");
    u.searchParams.append("c", "x y");
    u.searchParams.sort();
    u.hash = "top";
    const dv = new DataView(new ArrayBuffer(4));
    dv.setUint32(0, 0xdeadbeef);
    return Response.json({ href: u.href, host: u.host, parts: u.pathname.split("/").length, rel: new URL("../up?q", u).href, be: [dv.getUint8(0), dv.getUint16(2, true)], ok: URL.canParse("http://[::1]/") });
  }
  if (path === "/bad-url") return Response.text(new URL("http://a b/").href);
  if (path === "/module-read") return Response.json({ h: H.get("a"), p: P.get("a"), c: structuredClone(P) });
  if (path === "/module-headers") { H.append("a", "2"); return new Response("x"); }
  if (path === "/module-params") { P.sort(); return new Response("x"); }
  return new Response("not found", { status: 404 });
}
const H = new Headers({ a: "1" });
const P = new URLSearchParams("a=1");
"""


def start(sluice, tmp_path):
    path = tmp_path / "web.js"
    path.write_text(HANDLER)
    return sluice.start(args=["--handler-file", f"web={path}", "--handler", "web"])


def get(port, target, headers=None):
    return request(port, "GET", target, headers=headers, timeout=10)


def test_new_response_with_headers_is_written_as_node_would_send_it(sluice, tmp_path):
    """A string body is text/plain;charset=UTF-8, no body has no Content-Type, init's status
    and Headers are written, Set-Cookie's values one line each, the others joined."""
    start(sluice, tmp_path)
    r = get(sluice.port, "/plain")
    assert (r.status, r.body, r.header("content-type")) == (200, b"hello", "text/plain;charset=UTF-8"), r
    r = get(sluice.port, "/empty")
    assert (r.status, r.body, r.header("content-type")) == (204, b"", None), r
    r = get(sluice.port, "/init")
    assert (r.status, r.body) == (201, b'{"ok":true}'), r
    assert r.header_all("set-cookie") == ["a=1", "b=2"], r
    assert r.header("x-one") == "1, 2", r
    r = get(sluice.port, "/typed")
    assert r.header_all("content-type") == ["application/json"], r
    r = get(sluice.port, "/changed")
    assert r.header("a") == "2", r
    r = get(sluice.port, "/nope")
    assert (r.status, r.body) == (404, b"not found"), r
    # The helpers take a Headers too.
    r = get(sluice.port, "/helper-headers")
    assert (r.status, r.json(), r.header("content-type")) == (203, {"ok": 1}, "application/json"), r
    assert r.header_all("set-cookie") == ["a=1", "b=2"] and r.header("x-k") == "v", r


def test_response_text_json_and_instanceof(sluice, tmp_path):
    """`text()` and `json()` are promises of the body; `instanceof Response` holds for what
    the constructor and the helpers make, and `typeof Response` is "function"; a malformed body rejects with its SyntaxError."""
    start(sluice, tmp_path)
    r = get(sluice.port, "/self")
    assert r.status == 200 and r.json() == {"n": 42, "text": '{"n": 41}', "is": True, "plain": True,
                                            "obj": False, "type": "function"}, r
    mark = sluice.mark()
    r = get(sluice.port, "/bad-json")
    assert r.status == 500, r
    logged = sluice.wait_for_line(re.compile(r"warn: 500 handler_exception.*"), start=mark).group(0)
    assert "SyntaxError" in logged, logged


def test_fields_sluice_writes_are_refused_at_the_call_and_when_written(sluice, tmp_path):
    """Content-Length in init is a TypeError where the handler wrote it; Connection set on the
    Headers afterwards makes the Response unsendable (500 not_a_response); a status out of
    200-599 is node's RangeError."""
    start(sluice, tmp_path)
    cases = [("/reserved", "handler_exception", "content-length is written by sluice"),
             ("/reserved-later", "handler_not_a_response", ""),
             ("/helper-reserved", "handler_exception", "connection is written by sluice"),
             ("/bad-status", "handler_exception", "must be in the range of 200 to 599")]
    for target, reason, text in cases:
        time.sleep(1.1)  # One log line per reason per second.
        mark = sluice.mark()
        r = get(sluice.port, target)
        assert r.status == 500, (target, r)
        logged = sluice.wait_for_line(re.compile(r"warn: 500 " + reason + ".*"), start=mark).group(0)
        assert text in logged, logged


def test_module_headers_and_params_are_read_only_in_a_request(sluice, tmp_path):
    """A Headers or a URLSearchParams made by the module's top level can be read by every
    request and changed by none: module state is sealed, as for any object."""
    start(sluice, tmp_path)
    r = get(sluice.port, "/module-read")
    assert r.json() == {"h": "1", "p": "1", "c": {}}, r
    for target in ("/module-headers", "/module-params"):
        time.sleep(1.1)  # One log line per reason per second.
        mark = sluice.mark()
        r = get(sluice.port, target)
        assert r.status == 500, (target, r)
        logged = sluice.wait_for_line(re.compile(r"warn: 500 handler_exception.*"), start=mark).group(0)
        assert "Cannot modify module state from a request" in logged, logged
    assert get(sluice.port, "/module-read").json()["h"] == "1"


def test_url_and_data_view_in_a_handler(sluice, tmp_path):
    """A handler builds a URL from the request's path against a base (host lower-cased,
    default port dropped), changes its searchParams and hash, resolves a relative URL from
    it, and writes and reads a DataView; the values are node 20's for the same code. An
    invalid URL is the handler's TypeError, a 500."""
    start(sluice, tmp_path)
    r = get(sluice.port, "/url/x%20y/z")
    assert r.status == 200 and r.json() == {
        "href": "http://example.com/url/x%20y/z?a=1&b=2&c=x+y#top", "host": "example.com",
        "parts": 4, "rel": "http://example.com/url/up?q", "be": [222, 61374], "ok": True}, r
    mark = sluice.mark()
    r = get(sluice.port, "/bad-url")
    assert r.status == 500, r
    logged = sluice.wait_for_line(re.compile(r"warn: 500 handler_exception.*"), start=mark).group(0)
    assert "Invalid URL" in logged, logged


def test_base64_and_uuid_in_a_handler(sluice, tmp_path):
    """atob decodes a Basic credential, btoa encodes, randomUUID gives a fresh version 4 UUID
    per request."""
    start(sluice, tmp_path)
    ids = set()
    for _ in range(3):
        r = get(sluice.port, "/web", headers=[("Authorization", "Basic YWRhOnNlY3JldA==")])
        body = r.json()
        assert (body["user"], body["pass"], body["token"]) == ("ada", "secret", "YWRhIQ=="), r
        assert uuid.UUID(body["id"]).version == 4
        ids.add(body["id"])
    assert len(ids) == 3


EDGE = """\
export default function handler(request) {
  const headers = new Headers(request.headers);
  headers.set("X-User", atob("YWRh"));
  headers.delete("cookie");
  const keep = new Headers([["x-user", "ada"], ["x-user", "bob"]]);
  if (request.path === "/joined") return Response.proxy("web", { headers: keep });
  if (request.path === "/reserved") return Response.proxy("web", { headers: new Headers({ "x-forwarded-for": "10.0.0.1" }) });
  return Response.proxy("web", { headers: { "x-user": headers.get("x-user") } });
}
"""

EDGE_SITE = """\
.{
    .listen = "127.0.0.1:0",
    .handlers = .{ .edge = "edge.js" },
    .pools = .{ .web = .{ .backends = .{ "BACKEND" } } },
    .routes = .{ .{ .handler = "edge" } },
}
"""


def test_response_proxy_takes_a_headers(sluice, make_backend, tmp_path):
    """`Response.proxy(pool, { headers })` with a Headers: its fields go to the backend, a
    name's values joined with ", "; a field sluice writes is refused as from a record."""
    from client import Echoed
    backend = make_backend(name="web1")
    (tmp_path / "edge.js").write_text(EDGE)
    config = tmp_path / "site.zon"
    config.write_text(EDGE_SITE.replace("BACKEND", backend.address))
    sluice.start_config(config)
    e = Echoed(get(sluice.port, "/", headers=[("Cookie", "s=1")]))
    assert e.header("x-user") == "ada", e.headers
    e = Echoed(get(sluice.port, "/joined"))
    assert e.header("x-user") == "ada, bob", e.headers
    r = get(sluice.port, "/reserved")
    assert r.status == 500 and len(backend.requests) == 2, r
