"""Handlers across reloads (issue 13, docs/JS.md "Reload"): SIGHUP compiles a changed
`--handler-file` (with or without a config file) into the next generation, under load, with no
failed request; a handler that does not compile, or whose top level throws, refuses the reload
and the running one keeps serving; unchanged handlers are kept; a request that started on the
old generation finishes on the old engine; counters go on by name."""

import re
import subprocess
import threading
import time

import pytest

from client import Client, request
from test_admin import ADMIN_RE, scrape, value


def version_source(n, extra=""):
    return ("export default function handler(request) {\n"
            f"  {extra}\n"
            f"  return Response.text(\"v{n} \" + request.path);\n"
            "}\n")


def write(path, text):
    # Write then rename: a reload never reads a half-written file (editors do the same).
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def reload_and_wait(sluice, generation, timeout=10):
    mark = sluice.mark()
    sluice.signal(1)  # SIGHUP
    return sluice.wait_for_line(re.compile(rf"reloaded .*generation {generation} .*"), start=mark,
                                timeout=timeout).group(0)


def reload_refused(sluice):
    mark = sluice.mark()
    sluice.signal(1)  # SIGHUP
    sluice.wait_for_line(re.compile(r"reload failed: still serving generation \d+"), start=mark, timeout=10)
    return [line for line in sluice.lines[mark:] if "reload failed" in line]


@pytest.mark.time_limit(120)
def test_reload_swaps_a_handler_file_under_load_with_no_failed_request(sluice, tmp_path):
    """Two workers, keep-alive clients and new connections without pause, five reloads each
    compiling a new version: every answer is a 200 from some version, each version is seen,
    and after each reload new requests get the new one."""
    app = tmp_path / "app.js"
    write(app, version_source(1))
    sluice.start(args=["--handler-file", f"app={app}", "--handler", "app", "--admin", "127.0.0.1:0"],
                 workers=2)
    admin_port = int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))
    stop = threading.Event()
    errors, seen, counts = [], set(), [0]
    lock = threading.Lock()

    def keep_alive():
        try:
            c = Client(sluice.port, timeout=10)
            while not stop.is_set():
                r = c.request("GET", "/k")
                match = re.fullmatch(rb"v(\d+) /k", r.body)
                if r.status != 200 or not match:
                    errors.append(repr(r))
                    return
                with lock:
                    seen.add(int(match.group(1)))
                    counts[0] += 1
            c.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    def new_connections():
        try:
            while not stop.is_set():
                r = request(sluice.port, "GET", "/n", timeout=10)
                if r.status != 200 or not re.fullmatch(rb"v\d+ /n", r.body):
                    errors.append(repr(r))
                    return
                with lock:
                    counts[0] += 1
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=keep_alive) for _ in range(3)] + [threading.Thread(target=new_connections)]
    for t in threads:
        t.start()
    try:
        for n in range(2, 7):
            time.sleep(0.3)
            write(app, version_source(n))
            line = reload_and_wait(sluice, n)
            assert "1 handlers: 0 kept, 1 compiled" in line, line
            # Published to every worker before the reload says so: a new connection (to either
            # worker) gets the new version.
            for _ in range(4):
                assert request(sluice.port, "GET", "/after", timeout=10).body == f"v{n} /after".encode()
        time.sleep(0.3)
    finally:
        stop.set()
        for t in threads:
            t.join(20)
    assert not errors, errors[:3]
    assert seen >= {1, 6}, seen  # The keep-alive clients saw the first and the last.
    # The counter went on across the five compilations: one name, one count.
    families = scrape(admin_port)
    assert value(families, "sluice_handler_requests_total", handler="app") >= counts[0] + 20
    assert "reload failed" not in sluice.stderr_text()


@pytest.mark.parametrize("source,message", [
    ("export default function handler(request) {\n  return Response.text(;\n}\n", r"app\.js:2:\d+: Unexpected token"),
    ("throw new Error('top');\nexport default function h(r) {}\n", r"handler app: its top-level code failed at .*app\.js:1:\d+: Error: top"),
    # A top level that never ends holds the control thread for its deadline, not for ever.
    ("for (;;) Date.now();\nexport default function h(r) {}\n", r"handler app: its top-level code failed at .*app\.js:1:\d+: deadline exceeded"),
    ("export function other(r) {}\n", r"has no `export default function`"),
])
def test_a_reload_that_does_not_compile_keeps_the_running_handler(sluice, tmp_path, source, message):
    """The mistake's line (FILE:LINE:COL for a compile error), nothing published, and the
    running handler serves on; fixing the file and reloading again applies it."""
    app = tmp_path / "app.js"
    write(app, version_source(1))
    sluice.start(args=["--handler-file", f"app={app}", "--handler", "app"])
    write(app, source)
    lines = reload_refused(sluice)
    assert re.search(message, "\n".join(lines)), lines
    assert request(sluice.port, "GET", "/x", timeout=10).body == b"v1 /x"
    write(app, version_source(2))
    reload_and_wait(sluice, 2)
    assert request(sluice.port, "GET", "/x", timeout=10).body == b"v2 /x"


SITE = """\
.{
    .listen = "127.0.0.1:0",
    .handlers = .{ HANDLERS },
    .routes = .{ ROUTES },
}
"""


def site(config, handlers, routes):
    config.write_text(SITE.replace("HANDLERS", handlers).replace("ROUTES", routes))


def test_config_file_handlers_kept_compiled_added_and_limits_changed(sluice, tmp_path):
    """A file's handlers: an unchanged one is kept (its engines too), a changed file is
    compiled, a new handler and its route are added, and a changed limit applies, all by
    reload."""
    (tmp_path / "a.js").write_text(version_source("a1"))
    (tmp_path / "b.js").write_text(version_source("b1"))
    config = tmp_path / "site.zon"
    routes = '.{ .path_prefix = "/a/", .handler = "a" }, .{ .path_prefix = "/b/", .handler = "b" }'
    site(config, '.a = "a.js", .b = "b.js"', routes)
    sluice.start_config(config)
    assert request(sluice.port, "GET", "/a/", timeout=10).body == b"va1 /a/"

    # Nothing changed: both kept.
    assert "2 handlers: 2 kept, 0 compiled" in reload_and_wait(sluice, 2)
    # b's file changed: b compiled, a kept.
    write(tmp_path / "b.js", version_source("b2"))
    assert "2 handlers: 1 kept, 1 compiled" in reload_and_wait(sluice, 3)
    assert request(sluice.port, "GET", "/b/", timeout=10).body == b"vb2 /b/"
    assert request(sluice.port, "GET", "/a/", timeout=10).body == b"va1 /a/"

    # A new handler with its route.
    (tmp_path / "c.js").write_text(version_source("c1"))
    site(config, '.a = "a.js", .b = "b.js", .c = "c.js"', routes + ', .{ .path_prefix = "/c/", .handler = "c" }')
    assert "3 handlers: 2 kept, 1 compiled" in reload_and_wait(sluice, 4)
    assert request(sluice.port, "GET", "/c/", timeout=10).body == b"vc1 /c/"

    # A limit: a's memory lowered so far that its request object no longer fits is a 500.
    hog = version_source("a2", "const big = []; for (let i = 0; i < 5000; i++) big.push([i, i, i]);")
    write(tmp_path / "a.js", hog)
    assert "3 handlers: 2 kept, 1 compiled" in reload_and_wait(sluice, 5)
    assert request(sluice.port, "GET", "/a/", timeout=10).body == b"va2 /a/"
    site(config, '.a = .{ .file = "a.js", .memory = "64KiB" }, .b = "b.js", .c = "c.js"',
         routes + ', .{ .path_prefix = "/c/", .handler = "c" }')
    assert "3 handlers: 2 kept, 1 compiled" in reload_and_wait(sluice, 6)
    assert request(sluice.port, "GET", "/a/", timeout=10).status == 500
    assert request(sluice.port, "GET", "/b/", timeout=10).body == b"vb2 /b/"


def test_a_request_in_flight_finishes_on_the_engine_it_started_on(sluice, tmp_path):
    """A POST whose body is still arriving when a reload compiles a new version: it holds its
    generation, so the old engine (not freed, not replaced) answers it once the body is
    whole; requests after the reload get the new version."""
    app = tmp_path / "app.js"
    body_source = ("export default function handler(request) {\n"
                   "  return Response.text(\"VERSION \" + request.body);\n"
                   "}\n")
    write(app, body_source.replace("VERSION", "old"))
    sluice.start(args=["--handler-file", f"app={app}", "--handler", "app"])
    c = Client(sluice.port, timeout=10)
    c.send(b"POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nfirst")
    time.sleep(0.2)
    write(app, body_source.replace("VERSION", "new"))
    reload_and_wait(sluice, 2)
    for n in range(3, 6):  # More reloads while it waits: its generation stays held.
        write(app, body_source.replace("VERSION", f"new{n}"))
        reload_and_wait(sluice, n)
    assert request(sluice.port, "POST", "/p", body=b"after", timeout=10).body == b"new5 after"
    c.send(b"half!")
    r = c.read_response()
    assert (r.status, r.body) == (200, b"old firsthalf!"), r
    c.close()


@pytest.mark.time_limit(120)
def test_no_heap_allocations_per_request_across_reloads(sluice, tmp_path):
    """Reloads compile on the control thread into their own memory: handler requests after
    them still make no heap allocation."""
    app = tmp_path / "app.js"
    write(app, version_source(1))
    sluice.start(args=["--handler-file", f"app={app}", "--handler", "app"], workers=2)
    for n in range(2, 4):
        write(app, version_source(n))
        reload_and_wait(sluice, n)
    c = Client(sluice.port, timeout=10)
    for _ in range(200):
        assert c.request("GET", "/w").status == 200
    before = sluice.stats()
    for _ in range(2000):
        assert c.request("GET", "/w").body == b"v3 /w"
    after = sluice.stats()
    c.close()
    key = "heap_allocations_after_startup"
    assert after[key] == before[key], (before, after)


def test_readme_iteration_example(sluice, sluice_bin, tmp_path):
    """README.md "JavaScript handlers", Iterating: no config file, `--pid-file`, edit the file
    and `sluice reload --pid-file`, and the new code answers."""
    app, pid_file = tmp_path / "app.js", tmp_path / "sluice.pid"
    write(app, version_source(1))
    sluice.start(args=["--handler-file", f"app={app}", "--handler", "app", "--pid-file", str(pid_file)])
    assert request(sluice.port, "GET", "/r", timeout=10).body == b"v1 /r"
    write(app, version_source(2))
    mark = sluice.mark()
    done = subprocess.run([sluice_bin, "reload", "--pid-file", str(pid_file)], capture_output=True, text=True,
                          timeout=10)
    assert done.returncode == 0, done
    line = sluice.wait_for_line(re.compile(r"reloaded the command line: generation 2 .*"), start=mark).group(0)
    assert line.endswith("1 handlers: 0 kept, 1 compiled)"), line
    assert "generation 2" in done.stdout, done
    assert request(sluice.port, "GET", "/r", timeout=10).body == b"v2 /r"
    # A handler that does not compile: the command exits 1 with its FILE:LINE:COL (it used to
    # say `sent SIGHUP` and exit 0), and v2 keeps serving.
    write(app, "export default function (request) { return Response.text(\"v3\" +; }\n")
    done = subprocess.run([sluice_bin, "reload", "--pid-file", str(pid_file)], capture_output=True, text=True,
                          timeout=10)
    assert done.returncode == 1, done
    assert re.search(re.escape(str(app)) + r":1:\d+: ", done.stdout), done
    assert "still serving generation 2" in done.stdout, done
    assert request(sluice.port, "GET", "/r", timeout=10).body == b"v2 /r"
