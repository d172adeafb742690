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

from client import Client, request
from conftest import REPO
from test_admin import ADMIN_RE, scrape, status, value
from test_baked_config import ZIG, zig_build
from test_readme import readme_handlers

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
  if (path === "/spin") { let i = 0; while (true) { i++; } }
  if (path === "/deep") { const f = (n) => f(n + 1) + 1; return Response.text(String(f(0))); }
  if (path === "/hog") { const a = []; while (true) a.push([1, 2, 3]); }
  if (path === "/big") return Response.text("x".repeat(100000));
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
    "/spin": ("time", "execution budget exhausted", 13),
    "/deep": ("depth", "RangeError: Maximum call stack size exceeded", 14),
    "/hog": ("memory", "RangeError: Out of memory", 15),
    "/big": ("response_too_large", "does not fit a connection buffer", None),
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
    (name, source), = readme_handlers().items()
    assert name == "app.js"
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


def test_a_request_with_a_body_is_answered_then_closed(sluice, tmp_path):
    """Handlers do not read bodies yet: as for a route's own response, the answer comes, then
    the connection closes (without framing the body there is no next request to find)."""
    start_handler(sluice, tmp_path)
    with Client(sluice.port, timeout=10) as c:
        r = c.request("POST", "/request", headers=[("Content-Type", "text/plain")], body=b"x" * 1000)
        assert r.status == 200 and r.json()["method"] == "POST", r
        assert "close" in r.connection_tokens(), r
        assert c.wait_closed(3.0)


@pytest.mark.time_limit(90)
def test_failures_are_500_with_a_log_line_and_a_counter(sluice, tmp_path):
    """An uncaught exception and each limit: a 500 that tells the client nothing, a warning
    naming the handler, the file, the line and the column, and
    sluice_handler_failures_total{handler,reason}; the handler serves on afterwards."""
    start_handler(sluice, tmp_path, args=["--admin", "127.0.0.1:0"])
    admin_port = int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))
    path = str(tmp_path / "app.js")
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
        ("exception", "memory", "time", "depth", "response_too_large", "not_a_response")}}], handlers


@pytest.mark.parametrize("source,message", [
    # Compile mistakes: FILE:LINE:COL.
    ("export default function h(r) {\n  return Response.text(r.path\n}\n", r"app\.js:2:\d+: missing \) after argument list"),
    ("var x = 1;\nexport default function h(r) { return Response.text('x') }\n", r"app\.js:1:1: var is not supported"),
    ("const x = 1;\nclass A {}\nexport default function h(r) {}\n", r"app\.js:2:1: classes are not supported"),
    # Modules that compile but cannot serve.
    ("throw new Error('at start');\nexport default function h(r) {}\n", r"handler app: its top-level code failed at .*app\.js:1:\d+: Error: at start"),
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


def test_reload_that_changes_handlers_is_refused(sluice, make_backend, tmp_path):
    """Handlers are compiled at start-up only (for now): a reload changing them is refused,
    naming the key, and the running handler keeps serving."""
    backend = make_backend()
    config = tmp_path / "site.zon"
    config.write_text(SITE.replace("BACKEND", backend.address))
    write(tmp_path, "app.js", HANDLER)
    sluice.start_config(config)
    config.write_text(SITE.replace("BACKEND", backend.address).replace('"app.js"', '"other.js"'))
    mark = sluice.mark()
    sluice.signal(1)  # SIGHUP
    line = sluice.wait_for_line(re.compile(r"reload failed: .*"), start=mark, timeout=5).group(0)
    assert "handlers changed, which needs a restart" in line, line
    assert get(sluice.port, "/api/y").json() == {"path": "/api/y"}


@pytest.mark.time_limit(150)
def test_no_heap_allocations_per_handler_request(sluice, tmp_path):
    """With --workers 2, after warm-up, thousands of handler calls (JSON, text, redirects,
    exceptions and limits among them) leave heap_allocations_after_startup unchanged."""
    start_handler(sluice, tmp_path, workers=2)
    targets = ["/request?a=1&b=2", "/text?v=3", "/html", "/redirect", "/unicode", "/x", "/throw", "/deep"]

    def load(count, errors):
        try:
            c = Client(sluice.port, timeout=10)
            for i in range(count):
                target = targets[i % len(targets)]
                r = c.request("GET", target, headers=[("X-A", "1"), ("x-a", "2")])
                if r.status == 500:
                    c.close()
                    c = Client(sluice.port, timeout=10)
                elif r.status not in (200, 202, 302):
                    errors.append(repr(r))
            c.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    def run(total):
        errors = []
        threads = [threading.Thread(target=load, args=(total // 4, errors)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(100)
        assert not errors, errors[:3]

    run(400)
    before = sluice.stats()
    run(4000)
    after = sluice.stats()
    key = "heap_allocations_after_startup"
    assert after[key] == before[key], (before, after)
    assert sluice.stop(timeout=10.0) == 0
    assert sluice.exit_allocations() == after[key]


@pytest.mark.time_limit(300)
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
