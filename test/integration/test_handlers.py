"""JavaScript request handlers (issue 13, README.md "JavaScript handlers"): `--handler-file
NAME=FILE` compiled at start-up, `--handler NAME` and a route's `.handler`; the `request`
object; Response.json, .text, .html and .redirect written by sluice; an uncaught exception and
each limit answered 500 with a log line naming the handler, file, line and column, and counted
in /metrics; compile mistakes that refuse to start; no heap allocation per request."""

import re
import subprocess
import threading
import time

import pytest

from backends import fixed, health_endpoint, reset, route, slow_head
from client import Client, Echoed, request
from conftest import REPO
from test_admin import ADMIN_RE, scrape, status, value
from test_baked_config import ZIG, zig_build
from test_readme import README, readme_handlers

HANDLER = """\
export default function handler(request) {
  const { path, query } = request;
  if (path === "/request") return Response.json(request);
  if (path === "/text") return Response.text("plain " + (query.v ?? ""), { status: 202, headers: { "x-one": "1", "X-Two": 2 } });
  if (path === "/html") return Response.html("<p>hi</p>");
  if (path === "/typed") return Response.text("{}", { headers: { "Content-Type": "application/problem+json" } });
  if (path === "/redirect") return Response.redirect("https://example.com/next");
  if (path === "/moved") return Response.redirect("/new", 301);
  if (path === "/empty") return Response.text("", { status: 204 });
  if (path === "/unicode") return Response.json({ s: "é😀" });
  if (path === "/throw") throw new TypeError("secret detail");
  if (path === "/throw-string") throw "just a string";
  if (path === "/spin") { const s = "x".repeat(500000); let i = 0; while (true) { i += s.indexOf("y"); } }
  if (path === "/deep") { const f = (n) => f(n + 1) + 1; return Response.text(String(f(0))); }
  if (path === "/hog") { const a = []; while (true) a.push([1, 2, 3]); }
  if (path === "/big") return Response.text("x", { headers: { "x-big": "y".repeat(100000) } });
  if (path === "/bad-status") return Response.text("x", { status: 99 });
  if (path === "/bad-header") return Response.text("x", { headers: { "content-length": "5" } });
  if (path === "/not-a-response") return "hello";
  if (path === "/state") { hits++; return Response.text("counted"); }
  return Response.json({ path });
}
let hits = 0;
"""

FAILURES = {
    # path: (reason label, text in the log line, source line of the failure or None)
    "/throw": ("exception", "TypeError: secret detail", 11),
    "/throw-string": ("exception", "a thrown string: just a string", 12),
    # A search of 500 KB pays 62,500 ticks: the budget runs out in about 10 ms of CPU. (The
    # deadline, which a busy machine could make fire first, is set out of the way here; it has
    # tests of its own in test_handler_budget.py.)
    "/spin": ("time", "execution budget exhausted", 13),
    "/deep": ("depth", "RangeError: Maximum call stack size exceeded", 14),
    "/hog": ("memory", "RangeError: Out of memory", 15),
    # A body may be any size (test_handler_bodies.py); a head must fit a buffer.
    "/big": ("response_too_large", "the response head does not fit a connection buffer", None),
    "/bad-status": ("exception", "RangeError: Response: init.status must be in the range of 200 to 599", 17),
    "/bad-header": ("exception", "TypeError: Response: content-length is written by sluice", 18),
    "/not-a-response": ("not_a_response", "something other than a Response", None),
    # Module state is frozen once the top level has run: nothing survives a request.
    "/state": ("exception", "TypeError: Cannot modify module state from a request", 20),
}


def write(tmp_path, name, source):
    path = tmp_path / name
    path.write_text(source)
    return path


def start_handler(sluice, tmp_path, source=HANDLER, args=(), workers=1):
    path = write(tmp_path, "app.js", source)
    return sluice.start(args=["--handler-file", f"app={path}", "--handler", "app", *args],
                        workers=workers)


def get(port, target, headers=None, method="GET", version="HTTP/1.1"):
    return request(port, method, target, headers=headers, version=version, timeout=10)


def test_readme_example_answers_as_the_readme_says(sluice, tmp_path):
    """The README's handler (issue 13's example without Response.proxy): JSON with the query
    and the user agent, 401 without Authorization, the welcome with its header with one."""
    source = readme_handlers()["app.js"]
    # examples/handlers/app.js is the same handler, under a comment of its own.
    example = (REPO / "examples" / "handlers" / "app.js").read_text()
    assert example.split("\n", 2)[2] == source.split("\n", 1)[1]
    start_handler(sluice, tmp_path, source)
    r = get(sluice.port, "/api/hello?name=ada", headers=[("User-Agent", "curl/8.5.0")])
    assert r.status == 200 and r.header("content-type") == "application/json", r
    assert r.json() == {"hello": "ada", "via": "curl/8.5.0"}
    r = get(sluice.port, "/api/hello")
    assert r.json() == {"hello": "world"}  # No user agent: `via` is undefined, left out.
    r = get(sluice.port, "/private")
    assert (r.status, r.body) == (401, b"login first\n"), r
    assert r.header("content-type") == "text/plain; charset=utf-8"
    r = get(sluice.port, "/private", headers=[("Authorization", "Bearer x")])
    assert (r.status, r.body) == (200, b"welcome: GET /private\n"), r
    assert r.header("cache-control") == "no-store"


def test_request_object(sluice, tmp_path):
    """method, path without the query, the query's first value of each name decoded, the
    target as sent, headers by lower-case name with repeats joined by ", ", and the ip."""
    start_handler(sluice, tmp_path)
    target = "/request?a=1&b=x+y%2Fz&a=2&empty=&flag&%C3%A9=%E2%82%AC&bad=%zz"
    r = get(sluice.port, target, headers=[("X-Rep", "one"), ("x-REP", "two"), ("Accept", "*/*")],
            method="POST")
    assert r.status == 200, r
    got = r.json()
    assert got["method"] == "POST"
    assert got["path"] == "/request"
    assert got["target"] == target
    assert got["query"] == {"a": "1", "b": "x y/z", "empty": "", "flag": "", "é": "€", "bad": "%zz"}
    assert got["headers"]["x-rep"] == "one, two"
    assert got["headers"]["host"] == "sluice.test"
    assert got["headers"]["accept"] == "*/*"
    assert got["ip"] == "127.0.0.1"
    # A field name far longer than any target: lower-cased in the handler's heap.
    long_name = "X-" + "Long" * 2000
    r = get(sluice.port, "/request", headers=[(long_name, "v")])
    assert r.json()["headers"][long_name.lower()] == "v", r
    # An absolute-form target: the path is its path.
    r = get(sluice.port, "http://sluice.test/request?q=1")
    got = r.json()
    assert (got["path"], got["query"], got["target"]) == ("/request", {"q": "1"}, "http://sluice.test/request?q=1")


def test_responses(sluice, tmp_path):
    """Statuses, content types, a handler's fields, redirects, 204, HEAD, HTTP/1.0, UTF-8."""
    start_handler(sluice, tmp_path)
    r = get(sluice.port, "/text?v=1")
    assert (r.status, r.body) == (202, b"plain 1"), r
    assert r.header("x-one") == "1" and r.header("x-two") == "2"
    assert r.header("content-length") == "7"
    r = get(sluice.port, "/html")
    assert r.header("content-type") == "text/html; charset=utf-8" and r.body == b"<p>hi</p>"
    r = get(sluice.port, "/typed")
    assert r.header_all("content-type") == ["application/problem+json"], r
    r = get(sluice.port, "/redirect")
    assert (r.status, r.header("location"), r.body) == (302, "https://example.com/next", b""), r
    r = get(sluice.port, "/moved")
    assert (r.status, r.header("location")) == (301, "/new"), r
    r = get(sluice.port, "/empty")
    assert r.status == 204 and r.header("content-length") is None and r.body == b"", r
    r = get(sluice.port, "/unicode")
    assert r.json() == {"s": "é😀"} and int(r.header("content-length")) == len(r.body)
    r = get(sluice.port, "/text?v=22", method="HEAD")
    assert r.status == 202 and r.header("content-length") == "8" and r.body == b"", r
    r = get(sluice.port, "/text", version="HTTP/1.0")
    assert r.version == "HTTP/1.0" and r.status == 202, r


def test_keep_alive_and_pipelining(sluice, tmp_path):
    """A connection serves request after request, pipelined too, failures included (those
    close it, as sluice's own error answers do)."""
    start_handler(sluice, tmp_path)
    with Client(sluice.port, timeout=10) as c:
        for i in range(50):
            r = c.request("GET", f"/x{i}")
            assert r.json() == {"path": f"/x{i}"}
        c.send(b"".join(f"GET /p{i} HTTP/1.1\r\nHost: a\r\n\r\n".encode() for i in range(5)))
        assert [c.read_response().json()["path"] for _ in range(5)] == [f"/p{i}" for i in range(5)]
        r = c.request("GET", "/throw")
        assert r.status == 500 and "close" in r.connection_tokens()


BODY_JS = """\
export default async function handler(request) {
  const { path } = request;
  // A chunked body is not read before the call (its length is unknown): `request.body` is null.
  const body = request.body ?? await request.text();
  if (path === "/echo") return Response.json({ body, length: body.length, method: request.method });
  if (path === "/json") return Response.json({ got: request.json() });
  if (path === "/proxy") return Response.proxy("web", { path: "/sent-on" });
  return Response.text("no body needed");
}
"""

BODY_SITE = """\
.{
    .listen = "127.0.0.1:0",
    .admin = .{ .listen = "127.0.0.1:0" },
    .handlers = .{ .app = .{ .file = "body.js", .body_max = "4KiB" } },
    .pools = .{ .web = .{ .backends = .{"BACKEND"} } },
    .routes = .{.{ .handler = "app" }},
}
"""


def start_body(sluice, tmp_path, backend_address="127.0.0.1:9", workers=1):
    write(tmp_path, "body.js", BODY_JS)
    config = tmp_path / "site.zon"
    config.write_text(BODY_SITE.replace("BACKEND", backend_address))
    sluice.start_config(config, workers=workers)
    return int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))


def chunked(data, size=7):
    parts = [b"%x\r\n%s\r\n" % (len(data[i:i + size]), data[i:i + size]) for i in range(0, len(data), size)]
    return b"".join(parts) + b"0\r\n\r\n"


def test_request_body_and_json(sluice, tmp_path):
    """The body is read before the handler runs: `request.body` is its text (Content-Length
    or chunked, decoded), `request.json()` parses it; without a body `body` is "" and
    json() throws a SyntaxError (a 500 with its line). The connection stays open after a
    request with a body, and a pipelined request after it is answered."""
    start_body(sluice, tmp_path)
    with Client(sluice.port, timeout=10) as c:
        r = c.request("POST", "/echo", body="héllo wörld".encode())
        assert r.json() == {"body": "héllo wörld", "length": 11, "method": "POST"}, r
        assert "close" not in r.connection_tokens()
        r = c.request("POST", "/json", headers=[("Content-Type", "application/json")], body=b'{"a": [1, 2]}')
        assert r.json() == {"got": {"a": [1, 2]}}, r
        data = b"chunk " * 300
        c.send(b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(data) +
               b"GET /echo HTTP/1.1\r\nHost: a\r\n\r\n")
        r = c.read_response()
        assert r.json()["body"] == data.decode() and r.json()["length"] == len(data), r
        assert c.read_response().json() == {"body": "", "length": 0, "method": "GET"}
    mark = sluice.mark()
    r = get(sluice.port, "/json")
    assert r.status == 500, r
    line = sluice.wait_for_line(re.compile(r"warn: 500 handler_exception.*"), start=mark).group(0)
    assert "SyntaxError" in line and re.search(r"body\.js:6:\d+", line), line


def test_expect_100_continue_is_answered_before_a_handler_reads_the_body(sluice, tmp_path):
    """RFC 9110 §10.1.1: a handler's request with `Expect: 100-continue` gets `100 Continue`
    before sluice reads its body, then the final response; the connection serves on. A
    declared body over the limit gets its 413 instead, without a 100. HTTP/1.0 never sees a
    100; a client that sends the body at once gets the 100 and the answer in order."""
    start_body(sluice, tmp_path)
    continue_line = b"HTTP/1.1 100 Continue\r\n\r\n"
    with Client(sluice.port, timeout=10) as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        assert c.read_exact(len(continue_line), timeout=3) == continue_line  # Before any body byte.
        c.send(b"hello")
        r = c.read_response()
        assert r.json() == {"body": "hello", "length": 5, "method": "POST"}, r
        # Chunked, and then the connection still serves a plain request.
        c.send(b"POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\nTransfer-Encoding: chunked\r\n\r\n")
        assert c.read_exact(len(continue_line), timeout=3) == continue_line
        c.send(chunked(b"abc"))
        assert c.read_response().json()["body"] == "abc"
        assert c.request("GET", "/echo").json()["length"] == 0
        # Body sent at once, pipelined with the next request: 100, the answer, the next answer.
        c.send(b"POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nhi"
               b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
        assert c.read_exact(len(continue_line), timeout=3) == continue_line
        assert c.read_response().json()["body"] == "hi"
        assert c.read_response().status == 200
    with Client(sluice.port, timeout=10) as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n")
        r = c.read_response(skip_interim=False)
        assert r.status == 413, r
    with Client(sluice.port, timeout=10) as c:
        c.send(b"POST /echo HTTP/1.0\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc")
        r = c.read_response(skip_interim=False)
        assert r.status == 200 and r.json()["body"] == "abc", r
    # A route that needs no body still reads it first (the handler sees it): the same 100.
    with Client(sluice.port, timeout=10) as c:
        c.send(b"POST /other HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n")
        assert c.read_exact(len(continue_line), timeout=3) == continue_line
        c.send(b"z")
        assert c.read_response().body == b"no body needed"


def test_request_body_over_the_limit_is_413_and_the_handler_does_not_run(sluice, tmp_path):
    """`.body_max = "4KiB"`: a declared 5 KiB body is 413 and never reaches the handler; a
    chunked body (read for the handler's `request.text()`) that grows past 4 KiB is 413 as
    it is read; 4 KiB is read."""
    admin_port = start_body(sluice, tmp_path)
    r = request(sluice.port, "POST", "/echo", body=b"x" * 4096, timeout=10)
    assert r.json()["length"] == 4096, r
    r = request(sluice.port, "POST", "/echo", body=b"x" * 5000, timeout=10)
    assert r.status == 413, r
    with Client(sluice.port, timeout=10) as c:
        c.send(b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(b"y" * 5000, 1000))
        assert c.read_response().status == 413
    families = scrape(admin_port)
    assert value(families, "sluice_handler_requests_total", handler="app") == 2


def test_request_body_read_by_the_handler_goes_on_with_response_proxy(sluice, make_backend, tmp_path):
    """A body the handler has read is still sent whole to the pool it proxies to, framed as
    the client framed it."""
    backend = make_backend()
    start_body(sluice, tmp_path, backend.address)
    e = Echoed(request(sluice.port, "POST", "/proxy", body=b"z" * 3000, timeout=10))
    assert (e.target, e.body_len, e.framing) == ("/sent-on", 3000, "length"), e.data
    with Client(sluice.port, timeout=10) as c:
        c.send(b"POST /proxy HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked(b"q" * 2000, 300))
        e = Echoed(c.read_response())
    assert (e.body, e.framing) == (b"q" * 2000, "chunked"), e.data


def test_failures_are_500_with_a_log_line_and_a_counter(sluice, tmp_path):
    """An uncaught exception and each limit: a 500 that tells the client nothing, a warning
    naming the handler, the file, the line and the column, and
    sluice_handler_failures_total{handler,reason}; the handler serves on afterwards."""
    path = str(write(tmp_path, "app.js", HANDLER))
    config = tmp_path / "site.zon"
    config.write_text(
        '.{\n    .listen = "127.0.0.1:0",\n    .admin = .{ .listen = "127.0.0.1:0" },\n'
        f'    .handlers = .{{ .app = .{{ .file = "{path}", .deadline = "10s" }} }},\n'
        '    .routes = .{ .{ .handler = "app" } },\n}\n')
    sluice.start_config(config)
    admin_port = int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))
    expected = {}
    logged_at = {}
    for target, (reason, text, line) in FAILURES.items():
        # One line per reason per second (and a count of those not shown): wait it out.
        time.sleep(max(0.0, logged_at.get(reason, 0.0) + 1.1 - time.monotonic()))
        logged_at[reason] = time.monotonic()
        mark = sluice.mark()
        r = get(sluice.port, target)
        assert r.status == 500, (target, r)
        assert b"secret" not in r.body and b"TypeError" not in r.body
        assert r.body == b"500 Internal Server Error: the request handler failed\n", r
        logged = sluice.wait_for_line(re.compile(r"warn: 500 handler_" + reason + ".*"), start=mark).group(0)
        assert "handler app" in logged and text in logged, logged
        if line is not None:
            assert re.search(rf"at {re.escape(path)}:{line}:\d+: ", logged), logged
        else:
            assert f"({path})" in logged, logged
        expected[reason] = expected.get(reason, 0) + 1
        assert get(sluice.port, "/ok").json() == {"path": "/ok"}
    families = scrape(admin_port)
    for reason, count in expected.items():
        assert value(families, "sluice_handler_failures_total", handler="app", reason=reason) == count
    assert value(families, "sluice_handler_failures_total", handler="app", reason="exception") == 5
    assert value(families, "sluice_handler_requests_total", handler="app") == 2 * len(FAILURES)
    handlers = status(admin_port)["handlers"]
    assert handlers == [{"name": "app", "requests": 2 * len(FAILURES), "failures": {
        reason: expected.get(reason, 0) for reason in
        ("exception", "memory", "time", "deadline", "depth", "response_too_large", "not_a_response",
         "unknown_pool", "request_too_large", "busy", "abandoned")}}], handlers


@pytest.mark.parametrize("source,message", [
    # Compile mistakes: FILE:LINE:COL.
    ("export default function h(r) {\n  return Response.text(r.path\n}\n", r"app\.js:2:\d+: missing \) after argument list"),
    ("let x = 1;\nvar x = 2;\nexport default function h(r) { return Response.text('x') }\n", r"app\.js:2:5: Identifier 'x' has already been declared"),
    ("const x = 1;\nouter: for (;;) { continue inner; }\nexport default function h(r) {}\n", r"app\.js:2:28: Undefined label 'inner'"),
    # A message naming the token: text the compiler formats (it crashed here once, printing
    # memory already freed).
    ("export default function h(r) { return Response.text(; }\n", r"app\.js:1:\d+: Unexpected token ';'"),
    # Modules that compile but cannot serve.
    ("throw new Error('at start');\nexport default function h(r) {}\n", r"handler app: its top-level code failed at .*app\.js:1:\d+: Error: at start"),
    # A top level that would run for a minute is stopped by the deadline (50 ms).
    ("const end = Date.now() + 60000;\nwhile (Date.now() < end) {}\nexport default function h(r) {}\n",
     r"handler app: its top-level code failed at .*app\.js:2:\d+: deadline exceeded"),
    ("export function other(r) {}\n", r"has no `export default function`"),
    ("export default 5;\n", r"is not a function"),
])
def test_handler_mistakes_refuse_to_start(sluice_bin, tmp_path, source, message):
    """A handler that does not compile (FILE:LINE:COL), whose top-level code throws, or that
    has no default function: a line saying so, exit 2, nothing bound."""
    path = write(tmp_path, "app.js", source)
    done = subprocess.run([sluice_bin, "--listen", "127.0.0.1:0", "--handler-file", f"app={path}",
                           "--handler", "app"], capture_output=True, text=True, timeout=10)
    assert done.returncode == 2, done
    assert re.search(message, done.stderr), done.stderr
    assert "listening" not in done.stderr


def test_command_line_mistakes(sluice_bin, tmp_path):
    """--handler naming no handler, a malformed --handler-file, a missing file."""
    cases = [
        (["--handler", "app"], 'no handler "app": give its file with --handler-file app=FILE'),
        (["--handler-file", "app"], "expected NAME=FILE"),
        (["--handler-file", "a b=x.js"], "a handler name"),
        (["--handler-file", f"app={tmp_path}/missing.js", "--handler", "app"], "cannot read the handler"),
    ]
    for args, text in cases:
        done = subprocess.run([sluice_bin, "--listen", "127.0.0.1:0", *args], capture_output=True,
                              text=True, timeout=10)
        assert done.returncode != 0 and text in done.stderr, (args, done)


SITE = """\
.{
    .listen = "127.0.0.1:0",
    .handlers = .{ .app = "app.js" },
    .pools = .{ .web = .{ .backends = .{"BACKEND"} } },
    .routes = .{
        .{ .path_prefix = "/api/", .handler = "app" },
        .{ .pool = "web" },
    },
}
"""


def test_config_file_routes_to_a_handler_and_a_pool(sluice, make_backend, tmp_path):
    """A file's handlers, found beside it, and a route's .handler next to a pool's route."""
    backend = make_backend()
    config = tmp_path / "site.zon"
    config.write_text(SITE.replace("BACKEND", backend.address))
    write(tmp_path, "app.js", HANDLER)
    sluice.start_config(config)
    assert get(sluice.port, "/api/x").json() == {"path": "/api/x"}
    r = get(sluice.port, "/web/x")
    assert r.status == 200 and len(backend.requests) == 1, r
    assert backend.requests[0].target == "/web/x"


def test_check_refuses_unknown_handlers_and_compiles_known_ones(sluice_bin, tmp_path):
    """`sluice check`: a route naming an undeclared handler at its line and column; a
    declared handler that does not compile at its own FILE:LINE:COL; the example passes."""
    config = tmp_path / "site.zon"
    config.write_text(SITE.replace("BACKEND", "10.0.0.7:8000").replace('.handler = "app"', '.handler = "nope"'))
    write(tmp_path, "app.js", HANDLER)
    done = subprocess.run([sluice_bin, "check", str(config)], capture_output=True, text=True, timeout=10)
    assert done.returncode == 1
    assert re.search(r"site\.zon:6:47: unknown handler \"nope\": the handlers are app", done.stderr), done.stderr
    config.write_text(SITE.replace("BACKEND", "10.0.0.7:8000"))
    write(tmp_path, "app.js", "export default function h(r) {\n  return 1 +;\n}\n")
    done = subprocess.run([sluice_bin, "check", str(config)], capture_output=True, text=True, timeout=10)
    assert done.returncode == 1
    assert re.search(re.escape(str(tmp_path / "app.js")) + r":2:\d+: ", done.stderr), done.stderr
    example = REPO / "examples" / "handlers" / "site.zon"
    done = subprocess.run([sluice_bin, "check", str(example)], capture_output=True, text=True, timeout=10,
                          cwd="/")
    assert done.returncode == 0 and done.stdout.strip() == f"{example}: ok", done


def run_load(port, targets, total, statuses, body=None):
    """`total` requests over 4 keep-alive clients, cycling through `targets` (POSTs of `body`
    when one is given): each answer is one of `statuses` or a 500 (after which the client
    reconnects: sluice closes after a 500)."""
    errors = []

    def load(count):
        try:
            c = Client(port, timeout=10)
            for i in range(count):
                r = c.request("POST" if body else "GET", targets[i % len(targets)],
                              headers=[("X-A", "1"), ("x-a", "2")], body=body)
                if r.status == 500:
                    c.close()
                    c = Client(port, timeout=10)
                elif r.status not in statuses:
                    errors.append(repr(r))
            c.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=load, args=(total // 4,)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(100)
    assert not errors, errors[:3]


@pytest.mark.time_limit(150)
def test_no_heap_allocations_per_handler_request(sluice, tmp_path):
    """With --workers 2, after warm-up, thousands of handler calls (JSON, text, redirects,
    exceptions and limits among them) leave heap_allocations_after_startup unchanged."""
    start_handler(sluice, tmp_path, workers=2)
    targets = ["/request?a=1&b=2", "/text?v=3", "/html", "/redirect", "/unicode", "/x", "/throw", "/deep"]
    run_load(sluice.port, targets, 400, (200, 202, 302))
    before = sluice.stats()
    run_load(sluice.port, targets, 4000, (200, 202, 302))
    after = sluice.stats()
    key = "heap_allocations_after_startup"
    assert after[key] == before[key], (before, after)
    assert sluice.stop(timeout=10.0) == 0
    assert sluice.exit_allocations() == after[key]


LANGUAGE_HANDLER = r"""
var calls = "module state";
const strings = (parts) => parts;
const site = () => strings`a${1}b`;
const first = site();
export default function handler(request) {
  var found = null;
  search: for (var i = 0; i < 4; i++) {
    for (const word of ["x", request.path.slice(1)]) {
      if (word === "hit" && i === 2) {
        found = i;
        break search;
      }
      if (word === "skip") continue search;
    }
  }
  return Response.json({ calls, found, i, same: site() === first, raw: first.raw });
}
"""


def test_var_labels_and_tagged_templates_in_a_handler(sluice, tmp_path):
    """A handler written with var, a labelled loop and a tagged template answers as node's
    semantics say; the site's strings object made at start-up is the one every request sees,
    and thousands of requests allocate nothing on the heap."""
    start_handler(sluice, tmp_path, LANGUAGE_HANDLER)
    r = get(sluice.port, "/hit")
    assert r.status == 200, r
    assert r.json() == {"calls": "module state", "found": 2, "i": 2, "same": True, "raw": ["a", "b"]}
    assert get(sluice.port, "/skip").json()["i"] == 4
    run_load(sluice.port, ["/hit", "/skip", "/other"], 300, (200,))
    before = sluice.stats()
    run_load(sluice.port, ["/hit", "/skip", "/other"], 2000, (200,))
    after = sluice.stats()
    assert after["heap_allocations_after_startup"] == before["heap_allocations_after_startup"]


@pytest.mark.time_limit(300)
# One I/O backend: the build is what is tested, and it takes 10 s a time (CI's budget).
@pytest.mark.parametrize("io", ["epoll"])
def test_two_handlers_compiled_in(make_sluice, sluice_bin, tmp_path):
    """`zig build -Dhandler=app.js -Dhandler=hello.js`: each named after its file's stem, the
    binary serves both with no file to read (routes in a config file name them, `sluice check`
    knows them), and a handler with a mistake fails the build with its FILE:LINE:COL."""
    if not ZIG.exists():
        pytest.skip("no pinned zig in .zig/ (run tools/bootstrap.sh)")
    app = write(tmp_path, "app.js", HANDLER)
    hello = write(tmp_path, "hello.js", "export default function hello(request) {\n"
                  "  return Response.text(`hello from ${request.path}\\n`);\n}\n")
    prefix = tmp_path / "out"
    done = zig_build(f"-Dhandler={app}", f"-Dhandler={hello}", "-p", str(prefix))
    assert done.returncode == 0, done.stderr
    binary = str(prefix / "bin" / "sluice")
    config = write(tmp_path, "site.zon", '.{ .listen = "127.0.0.1:0", .routes = .{ '
                   '.{ .path_prefix = "/api/", .handler = "app" }, .{ .path_prefix = "/throw", .handler = "app" }, '
                   '.{ .handler = "hello" } } }\n')
    check = subprocess.run([binary, "check", str(config)], capture_output=True, text=True, timeout=10)
    assert check.returncode == 0, check
    plain = subprocess.run([sluice_bin, "check", str(config)], capture_output=True, text=True, timeout=10)
    assert plain.returncode == 1 and 'unknown handler "app": there are no handlers' in plain.stderr, plain
    app.unlink()  # Nothing is read at start-up.
    sluice = make_sluice()
    sluice.binary = binary
    sluice.start_config(config)
    assert get(sluice.port, "/api/x").json() == {"path": "/api/x"}
    r = get(sluice.port, "/other")
    assert (r.status, r.body) == (200, b"hello from /other\n"), r
    mark = sluice.mark()
    assert get(sluice.port, "/throw").status == 500
    logged = sluice.wait_for_line(re.compile(r"warn: 500 handler_exception.*"), start=mark).group(0)
    assert "handler app at app.js:11:" in logged, logged
    bad = write(tmp_path, "bad.js", "export default function bad(r) {\n  return 1 +;\n}\n")
    done = zig_build(f"-Dhandler={bad}", "-p", str(tmp_path / "bad-out"))
    assert done.returncode != 0
    assert re.search(re.escape(str(bad)) + r":2:\d+: ", done.stderr), done.stderr


# ---------------------------------------------------------------------------------------
# Response.proxy

PROXY = """\
export default function handler(request) {
  const { path, query, headers } = request;
  if (path === "/rewrite") return Response.proxy("web", { path: "/v2/items?id=" + query.id, headers: { "X-Id": query.id, "user-agent": "edge", authorization: null, "X-Absent": null } });
  if (path === "/remove-host") return Response.proxy("web", { headers: { host: null } });
  if (path === "/nopool") return Response.proxy("nope");
  if (path === "/bad-path") return Response.proxy("web", { path: "no-slash" });
  if (path === "/space-path") return Response.proxy("web", { path: "/a b" });
  if (path === "/crlf") return Response.proxy("web", { headers: { "x-a": "1\\r\\nX-Evil: 1" } });
  if (path === "/host") return Response.proxy("web", { headers: { Host: "internal" } });
  if (path === "/length") return Response.proxy("web", { headers: { "Content-Length": "0" } });
  if (path === "/te") return Response.proxy("web", { headers: { "transfer-encoding": "chunked" } });
  if (path === "/xff") return Response.proxy("web", { headers: { "X-Forwarded-For": "10.9.9.9" } });
  if (path === "/bad-name") return Response.proxy("web", { headers: { "a b": "1" } });
  if (path === "/changed") { const r = Response.proxy("web"); r.path = "/x\\r\\nHost: evil"; return r; }
  if (path === "/huge") return Response.proxy("web", { headers: { "x-big": "y".repeat(100000) } });
  if (headers["x-admin"] === "1") return Response.text("no", { status: 403 });
  return Response.proxy("web");
}
"""

PROXY_SITE = """\
.{
    .listen = "127.0.0.1:0",
    .admin = .{ .listen = "127.0.0.1:0" },
    .handlers = .{ .edge = "edge.js" },
    .pools = .{ .web = .{ .backends = .{ BACKENDS }, EXTRA } },
    .routes = .{ .{ .handler = "edge" } },
}
"""


def start_proxy(sluice, tmp_path, backends, extra="", workers=1, args=()):
    write(tmp_path, "edge.js", PROXY)
    config = tmp_path / "site.zon"
    config.write_text(PROXY_SITE.replace("BACKENDS", ", ".join(f'"{b.address}"' for b in backends))
                      .replace("EXTRA", extra))
    sluice.start_config(config, workers=workers, args=args)
    return int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))


def test_proxying_exchanges_cannot_starve_a_parked_connection(sluice, make_backend, tmp_path):
    """A Response.proxy exchange holds three of the worker's buffers at once (the connection's,
    the exchange's, and the head kept for retries), and sizing reserves all three per session:
    with 4 sessions, three of them proxying to a slow backend, a keep-alive connection that
    gave its buffer back while idle still wakes and is answered, and no request is refused for
    want of a buffer. (The simulator found it: with two reserved, the third was taken from the
    other sessions' reserve; here the third proxied request and the parked connection got
    "503 no capacity" with a session free, and a wake-up that found the pool empty, which
    sizing promised could not happen, would have stopped the process.)"""
    backend = make_backend(slow_head(1.5, fixed(200, body=b"slow")), name="web1")
    admin = start_proxy(sluice, tmp_path, [backend], args=["--max-connections", "4"])
    parked = Client(sluice.port)
    assert parked.request("GET", "/", headers=[("X-Admin", "1")]).status == 403  # The handler's own.
    deadline = time.monotonic() + 5
    while value(scrape(admin), "sluice_idle_parks_total") < 1:  # Idle past its hot second.
        assert time.monotonic() < deadline, "the idle connection never parked its buffer"
        time.sleep(0.1)
    busy = [Client(sluice.port) for _ in range(3)]
    for client in busy:
        client.send_request("GET", "/slow")
    time.sleep(0.5)  # All three are with the backend now, each holding its three buffers.
    assert parked.request("GET", "/", headers=[("X-Admin", "1")]).status == 403
    assert [client.read_response().status for client in busy] == [200, 200, 200]
    assert sluice.running()
    for client in [parked, *busy]:
        client.close()


def test_proxy_rewrites_the_target_and_fields_the_backend_sees(sluice, make_backend, tmp_path):
    """Response.proxy("web", { path, headers }): the backend gets the new target, the
    handler's fields replacing the client's of the same name (any case) or added, and the
    fields sluice writes (Host, X-Forwarded-*) as for any proxied request; a plain
    Response.proxy("web") forwards the request as it came; the response is the backend's."""
    backend = make_backend(name="web1")
    start_proxy(sluice, tmp_path, [backend])
    r = get(sluice.port, "/rewrite?id=42", headers=[("User-Agent", "curl/8"), ("X-Keep", "k"), ("x-id", "spoof")])
    e = Echoed(r)
    assert e.target == "/v2/items?id=42" and e.backend == "web1", e.data
    names = [k.lower() for k, _ in e.headers]
    assert names.count("x-id") == 1 and names.count("user-agent") == 1, e.headers
    assert e.header("x-id") == "42" and e.header("user-agent") == "edge" and e.header("x-keep") == "k"
    assert e.header("x-forwarded-for") == "127.0.0.1" and e.header("host") == "sluice.test"
    # A null removes the client's fields of that name (every one, any case); fields sluice
    # writes cannot be removed (a TypeError, so a 500, and nothing forwarded).
    r = get(sluice.port, "/rewrite?id=7", headers=[("Authorization", "Bearer a"), ("authorization", "b"), ("X-Keep", "k")])
    e = Echoed(r)
    assert e.header("authorization") is None and e.header("x-absent") is None and e.header("x-keep") == "k", e.headers
    assert get(sluice.port, "/remove-host").status == 500 and len(backend.requests) == 2
    e = Echoed(get(sluice.port, "/as/is?q=1", headers=[("User-Agent", "curl/8")]))
    assert e.target == "/as/is?q=1" and e.header("user-agent") == "curl/8"
    r = get(sluice.port, "/as/is", headers=[("X-Admin", "1")])
    assert r.status == 403 and len(backend.requests) == 3
    # A body streams to the pool as it would through a route.
    r = request(sluice.port, "POST", "/post", body=b"z" * 5000, timeout=10)
    assert Echoed(r).body_len == 5000


def test_proxy_mistakes_are_500_and_nothing_malformed_is_forwarded(sluice, make_backend, tmp_path):
    """An unknown pool, a path that is not origin-form, a value with CR LF, a field sluice
    owns (Host, framing, forwarding), a name that is not a token, a property changed after
    the call, and a head too large for the buffer: each a 500, a log line naming the handler
    (and the pool), a counter with its reason, and nothing reaches the backend."""
    backend = make_backend()
    admin_port = start_proxy(sluice, tmp_path, [backend])
    cases = {
        "/nopool": ("unknown_pool", 'Response.proxy names pool "nope", which the configuration does not have: '
                    'the pools are web'),
        "/bad-path": ("exception", "TypeError: Response.proxy: path must start with /"),
        "/space-path": ("exception", "TypeError: Response.proxy: path must start with /"),
        "/crlf": ("exception", "TypeError: Response: a header value may not contain CR, LF"),
        "/host": ("exception", "TypeError: Response: host is written by sluice"),
        "/length": ("exception", "TypeError: Response: content-length is written by sluice"),
        "/te": ("exception", "TypeError: Response: transfer-encoding is written by sluice"),
        "/xff": ("exception", "TypeError: Response: x-forwarded-for is written by sluice"),
        "/bad-name": ("exception", "TypeError: Response: a header name must be a token"),
        "/changed": ("not_a_response", "pool, path or headers were changed"),
        "/huge": ("request_too_large", 'the request proxied to pool "web" does not fit'),
    }
    logged_at = {}
    counts = {}
    for target, (reason, text) in cases.items():
        time.sleep(max(0.0, logged_at.get(reason, 0.0) + 1.1 - time.monotonic()))
        logged_at[reason] = time.monotonic()
        mark = sluice.mark()
        r = get(sluice.port, target)
        assert r.status == 500, (target, r)
        line = sluice.wait_for_line(re.compile(r"warn: 500 handler_" + reason + ".*"), start=mark).group(0)
        assert "handler edge" in line and text in line, (target, line)
        counts[reason] = counts.get(reason, 0) + 1
    assert backend.requests == []
    families = scrape(admin_port)
    for reason, count in counts.items():
        assert value(families, "sluice_handler_failures_total", handler="edge", reason=reason) == count
    assert Echoed(get(sluice.port, "/fine")).target == "/fine"


def test_the_pool_of_backend_flags_is_called_default(sluice, make_backend, tmp_path):
    """Issue 19: the pool `--backend` flags make is named `default` (README, Command line), so
    a handler sends requests on to it with `Response.proxy("default")`; a name it does not
    have is a 500 whose log line lists the pools there are."""
    backend = make_backend(name="b1")
    app = write(tmp_path, "app.js", """\
export default function handler(request) {
  if (request.path === "/wrong") return Response.proxy("web");
  return Response.proxy("default", { path: "/via" + request.path });
}
""")
    sluice.start([backend], args=["--handler-file", f"app={app}", "--handler", "app"])
    e = Echoed(get(sluice.port, "/x"))
    assert e.target == "/via/x" and e.backend == "b1", e.data
    mark = sluice.mark()
    assert get(sluice.port, "/wrong").status == 500
    line = sluice.wait_for_line(re.compile(r"warn: 500 handler_unknown_pool.*"), start=mark).group(0)
    assert 'names pool "web", which the configuration does not have: the pools are default' in line, line


def test_proxy_retries_another_backend_with_the_rewritten_head(sluice, make_backend, tmp_path):
    """A pool of a backend that answers 500 after a pause and a good one, 5xx in the pool's
    retries: every proxied request ends 200 at the good backend with its own rewritten
    target and X-Id, though other requests ran the handler (and reused its heap) while it
    waited: a retry resends the head composed from the first call. One that resets: a GET
    is retried on the good one."""
    bad = make_backend(slow_head(0.05, then=fixed(500, body=b"bad")), name="bad")
    good = make_backend(name="good")
    start_proxy(sluice, tmp_path, [bad, good],
                extra='.retry = .{ .on = .{ .connect, .reset, .@"5xx" }, .budget_percent = 100 }, '
                      '.ejection = .{ .after = 0 }')
    errors = []

    def client(base):
        try:
            c = Client(sluice.port, timeout=10)
            for i in range(base, base + 10):
                e = Echoed(c.request("GET", f"/rewrite?id={i}"))
                if (e.backend, e.target, e.header("x-id")) != ("good", f"/v2/items?id={i}", str(i)):
                    errors.append(e.data)
            c.close()
        except Exception as ex:  # noqa: BLE001 - reported below
            errors.append(repr(ex))

    threads = [threading.Thread(target=client, args=(k * 100,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors[:3]
    assert len(bad.requests) >= 5, "round robin sent some first tries to the bad backend"
    assert all(req.target.startswith("/v2/items?id=") for req in bad.requests)


def test_proxy_retries_a_reset(sluice, make_backend, tmp_path):
    """A backend that resets every request: GETs proxied by the handler are retried on the
    other backend and all succeed."""
    bad = make_backend(reset(), name="bad")
    good = make_backend(name="good")
    start_proxy(sluice, tmp_path, [bad, good], extra='.ejection = .{ .after = 0 }')
    for i in range(6):
        e = Echoed(get(sluice.port, f"/rewrite?id={i}"))
        assert (e.backend, e.target) == ("good", f"/v2/items?id={i}")
    assert any(req.target.startswith("/v2/items") for req in bad.requests)


@pytest.mark.time_limit(30)
def test_proxy_follows_the_pools_health(sluice, make_backend, tmp_path):
    """Active health checks on the pool a handler proxies to: a backend whose health path
    fails gets no request the handler sends on. (A's probes get 2 s: with fall 1, one probe
    slowed past 300 ms on a busy machine took A down too, and the request got a 503.)"""
    a = make_backend(name="A")
    b = make_backend(health_endpoint(status=503), name="B")
    start_proxy(sluice, tmp_path, [a, b],
                extra='.health = .{ .path = "/health", .interval = "100ms", .timeout = "2s", .rise = 1, .fall = 1 }')
    sluice.wait_for_line(re.compile(r"is down: active check failed"), timeout=5)
    for i in range(8):
        assert Echoed(get(sluice.port, f"/rewrite?id={i}")).backend == "A"
    assert not [req for req in b.requests if req.target != "/health"]


# ---------------------------------------------------------------------------------------
# Limits per handler

LIMITS_JS = """\
export default function handler(request) {
  const { path } = request;
  if (path.endsWith("/alloc")) { const a = []; for (let i = 0; i < 4000; i++) a.push("item " + i); return Response.text(String(a.length)); }
  if (path.endsWith("/loop")) { let s = 0; for (let i = 0; i < 200000; i++) s += i; return Response.text(String(s)); }
  if (path.endsWith("/deep")) { const f = (n) => n === 0 ? 0 : f(n - 1) + 1; return Response.text(String(f(100))); }
  return Response.text("ok");
}
"""

LIMITS_SITE = """\
.{
    .listen = "127.0.0.1:0",
    .admin = .{ .listen = "127.0.0.1:0" },
    .handlers = .{
        .small = .{ .file = "limits.js", .memory = "64KiB", .budget = 100000, .depth = 16, .deadline = "10s" },
        .roomy = .{ .file = "limits.js", .deadline = "10s" },
    },
    .routes = .{
        .{ .path_prefix = "/small/", .handler = "small" },
        .{ .handler = "roomy" },
    },
}
"""


def test_limits_per_handler(sluice, tmp_path):
    """The same code under two handlers: the one with the defaults (1 MiB, 5*10^7 ticks, 512
    calls) answers each request; the one given 64 KiB, 10^5 ticks and 16 calls in the file
    fails each with a 500, a line and its own reason in /metrics (memory, time, depth). Both
    have a deadline of 10 s, so that a busy machine pausing the worker cannot make the clock
    stop a run first (the deadline has tests of its own)."""
    write(tmp_path, "limits.js", LIMITS_JS)
    config = tmp_path / "site.zon"
    config.write_text(LIMITS_SITE)
    sluice.start_config(config)
    admin_port = int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))
    expected = {"/alloc": ("memory", b"4000"), "/loop": ("time", b"19999900000"), "/deep": ("depth", b"100")}
    for path, (reason, body) in expected.items():
        r = get(sluice.port, path)
        assert (r.status, r.body) == (200, body), (path, r)
        mark = sluice.mark()
        r = get(sluice.port, "/small" + path)
        assert r.status == 500, (path, r)
        line = sluice.wait_for_line(re.compile(r"warn: 500 handler_" + reason + ".*"), start=mark).group(0)
        assert "handler small" in line, line
    families = scrape(admin_port)
    for reason, _ in expected.values():
        assert value(families, "sluice_handler_failures_total", handler="small", reason=reason) == 1
        assert value(families, "sluice_handler_failures_total", handler="roomy", reason=reason) == 0
    assert get(sluice.port, "/small/fine").body == b"ok"


@pytest.mark.parametrize("entry,message", [
    ('.memory = "1KiB"', r"site\.zon:2:\d+: .*65536"),
    (".budget = 10", r"site\.zon:2:\d+: .*1000"),
    (".deadline = 50", r"site\.zon:2:\d+: expected a string: a duration such as"),
    (".depth = 100000", r"site\.zon:2:\d+: .*10000"),
    (".stack = 5", r"site\.zon:2:\d+: unknown key \"stack\""),
])
def test_check_refuses_handler_limits_out_of_range(sluice_bin, tmp_path, entry, message):
    """A handler's limits outside their bounds, or a key a handler does not have, are
    refused by `sluice check` at their line and column."""
    write(tmp_path, "limits.js", LIMITS_JS)
    config = tmp_path / "site.zon"
    config.write_text('.{\n    .handlers = .{ .small = .{ .file = "limits.js", ' + entry + ' } },\n'
                      '    .handler = "small",\n}\n')
    done = subprocess.run([sluice_bin, "check", str(config)], capture_output=True, text=True, timeout=10)
    assert done.returncode == 1, done
    assert re.search(message, done.stderr), done.stderr



def test_a_body_still_arriving_across_a_reload_goes_to_the_generation_it_started_on(sluice, make_backend, tmp_path):
    """A request whose body is still arriving when a reload rebuilds the pool with another
    backend: the handler's Response.proxy resolves the pool in the generation the request
    started on (which it holds), so it reaches the old backend; a request after the reload
    reaches the new one. (The reload changes the strategy too, so that the pool is rebuilt: a
    change of members alone keeps the pool and its live membership, where a request not yet
    sent goes to the members of the moment, test_membership_changes.py.)"""
    old, new = make_backend(name="old"), make_backend(name="new")
    start_body(sluice, tmp_path, old.address)
    c = Client(sluice.port, timeout=10)
    c.send(b"POST /proxy HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nfirst")
    time.sleep(0.2)
    config = tmp_path / "site.zon"
    config.write_text(BODY_SITE.replace("BACKEND", new.address).replace(
        '.backends = .{"' + new.address + '"}', '.backends = .{"' + new.address + '"}, .strategy = .least_conn'))
    mark = sluice.mark()
    sluice.signal(1)  # SIGHUP
    sluice.wait_for_line(re.compile(r"reloaded .*generation 2"), start=mark, timeout=5)
    e = Echoed(request(sluice.port, "POST", "/proxy", body=b"after", timeout=10))
    assert e.backend == "new", e.data
    c.send(b"half")
    time.sleep(0.1)
    c.send(b"!")
    e = Echoed(c.read_response())
    assert (e.backend, e.body) == ("old", b"firsthalf!"), e.data
    c.close()


def test_readme_proxy_example_answers_as_the_readme_says(sluice, make_backend, tmp_path):
    """The README's edge.js and its config, with two real backends for the pool: /admin/
    without the key is the handler's 403 and reaches no backend, with it goes on without
    the key; /v1/ is rewritten to /v2/
    with x-api-version; everything else goes on as it came, spread over both backends."""
    a, b = make_backend(name="A"), make_backend(name="B")
    (tmp_path / "edge.js").write_text(readme_handlers()["edge.js"])
    zon, = [z for z in re.findall(r"```zon\n(.*?)```", README, re.S) if "edge.js" in z]
    zon = zon.replace('"10.0.0.7:8000"', f'"{a.address}"').replace('"10.0.0.8:8000"', f'"{b.address}"')
    config = tmp_path / "site.zon"
    config.write_text(zon.replace(".{\n", '.{\n    .listen = "127.0.0.1:0",\n', 1))
    sluice.start_config(config)
    r = get(sluice.port, "/admin/users")
    assert (r.status, r.body) == (403, b"forbidden\n"), r
    assert a.requests == [] and b.requests == []
    e = Echoed(get(sluice.port, "/admin/users", headers=[("X-Api-Key", "letmein")]))
    assert e.target == "/admin/users" and e.header("x-api-key") is None, e.data
    e = Echoed(get(sluice.port, "/v1/items"))
    assert e.target == "/v2/items" and e.header("x-api-version") == "1", e.data
    backends = {Echoed(get(sluice.port, f"/page/{i}")).backend for i in range(4)}
    assert backends == {"A", "B"}


def test_a_304_has_no_length_no_helper_type_and_no_body(sluice, tmp_path):
    """The probe's finding: a handler's 304 went out with `Content-Length: 0` and the helper's
    Content-Type. RFC 9110 §8.6 allows a 304's Content-Length only as the 200's length, and
    §15.4.5 no representation metadata but what guides caches: so neither, and the ETag the
    handler wrote. The connection goes on (the 304 ends with its head)."""
    start_handler(sluice, tmp_path, """export default function (request) {
  if (request.headers["if-none-match"] === '"v1"') {
    return Response.text("", { status: 304, headers: { etag: '"v1"', "cache-control": "max-age=60" } });
  }
  return Response.text("fresh", { headers: { etag: '"v1"' } });
}
""")
    with Client(sluice.port) as c:
        assert c.request("GET", "/r").body == b"fresh"
        r = c.request("GET", "/r", headers=[("If-None-Match", '"v1"')])
        assert r.status == 304 and r.body == b"", r
        assert r.header("content-length") is None and r.header("content-type") is None, r
        assert r.header("etag") == '"v1"' and r.header("cache-control") == "max-age=60", r
        assert c.request("GET", "/r").body == b"fresh"  # The next response is framed right.


ASYNC_HANDLER = """\
async function lookup(name) {
  await null;
  return { name, length: name.length };
}
export default async function handler(request) {
  const { path } = request;
  if (path === "/async") {
    const [a, b] = await Promise.all([lookup("x"), lookup("yz")]);
    return Response.json({ a, b, order: await order() });
  }
  if (path === "/then") return Promise.resolve(7).then((n) => Response.text("then " + n));
  if (path === "/reject") return Promise.reject(new RangeError("no"));
  if (path === "/await-throw") await lookup(null);
  if (path === "/pending") return new Promise(() => {});
  if (path === "/forever") for (;;) await null;
  return Response.json({ path });
}
async function order() {
  const seen = [];
  queueMicrotask(() => seen.push("micro"));
  await Promise.resolve().then(() => seen.push("then"));
  seen.push("after");
  return seen;
}
"""


def test_async_handlers_return_promises_of_responses(sluice, tmp_path):
    """A handler may be async or return a Promise: the microtask queue is drained per call and
    the settled Response written; a rejection is the handler's exception; a Promise left
    pending with nothing that could settle it is a 500 that says so; `for (;;) await null`
    is stopped like any loop (issue 25 §1)."""
    start_handler(sluice, tmp_path, source=ASYNC_HANDLER)
    r = get(sluice.port, "/async")
    assert r.status == 200 and r.json() == {"a": {"name": "x", "length": 1}, "b": {"name": "yz", "length": 2},
                                            "order": ["micro", "then", "after"]}, r
    r = get(sluice.port, "/then")
    assert (r.status, r.body) == (200, b"then 7"), r
    cases = [("/reject", "exception", "RangeError: no"),
             ("/await-throw", "exception", "TypeError: Cannot read properties of null (reading 'length')"),
             ("/pending", "exception", "still pending"),
             ("/forever", "(time|deadline|memory)", "")]
    for target, reason, text in cases:
        time.sleep(1.1)  # One log line per reason per second.
        mark = sluice.mark()
        r = get(sluice.port, target)
        assert r.status == 500, (target, r)
        logged = sluice.wait_for_line(re.compile(r"warn: 500 handler_" + reason + ".*"), start=mark).group(0)
        assert text in logged, logged
        assert get(sluice.port, "/ok").json() == {"path": "/ok"}
