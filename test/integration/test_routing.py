"""Listeners and routes: a request is matched against the routes in file order (the first
match wins) by listener, host, path prefix and method, and then goes to a pool, is answered
by sluice itself (`respond`) or redirected (`redirect`); a request no route matches gets
sluice's own 404 on a connection that stays usable. Per-pool and per-route metrics, `sluice
check` on route mistakes, and no heap allocation per routed request.

Every config here is a ZON file the test writes (conftest.zon) and runs with `sluice --config
FILE` and no --listen, so the file's listeners are the ones that serve.
"""

import re
import threading

import pytest

from backends import echo
from client import Client, Echoed, is_refused, request, wait_until
from conftest import assert_quiescent, free_port, write_zon
from test_admin import ADMIN_RE, scrape, value
from test_config_docs import check


# ---------------------------------------------------------------------------------------
# Helpers


def config(pools, routes=None, **top):
    """A config: one listener on 127.0.0.1:0 unless `listeners` (or `listen`) is given,
    the pools (name -> list of backends, or name -> pool dict) and the routes."""
    out = {} if ("listeners" in top or "listen" in top) else {"listen": "127.0.0.1:0"}
    out.update(top)
    out["pools"] = {name: ({"backends": [_addr(b) for b in p]} if isinstance(p, list) else p)
                    for name, p in pools.items()}
    if routes is not None:
        out["routes"] = routes
    return out


def _addr(b):
    return b.address if hasattr(b, "address") else b


def says(text, **conditions):
    """A route answered by sluice itself: 200, text/plain, body `text` + newline."""
    return {**conditions, "respond": {"content_type": "text/plain", "body": text + "\n"}}


def start(sluice, tmp_path, cfg, args=(), workers=1, name="routes.zon"):
    path = write_zon(tmp_path / name, cfg)
    sluice.start_config(path, args=args, workers=workers)
    return path


def said(r):
    """The text of a `says` route's answer, or the status for anything else."""
    if r.status == 200 and r.header("content-type") == "text/plain":
        return r.body.decode().rstrip("\n")
    return r.status


def family_sum(families, name):
    """The sum of every sample of a counter family (whatever its labels)."""
    assert name in families, f"no metric family {name}: {sorted(families)}"
    return sum(v for n, _, v in families[name]["samples"] if n == name)


# ---------------------------------------------------------------------------------------
# Matching


def test_first_matching_route_wins_in_file_order(sluice, backend, tmp_path):
    """Routes are tried in file order: a more specific route listed after a general one
    never matches; the catch-all at the end takes everything else."""
    start(sluice, tmp_path, config({"app": [backend]}, [
        says("general", path_prefix="/order"),
        says("specific", path_prefix="/order/special"),
        says("catch-all"),
    ]))
    with Client(sluice.port) as c:
        assert said(c.request("GET", "/order/special/1")) == "general"
        assert said(c.request("GET", "/order/special")) == "general"
        assert said(c.request("GET", "/orders")) == "general"
        assert said(c.request("GET", "/other")) == "catch-all"
        assert said(c.request("GET", "/")) == "catch-all"
    assert backend.requests == []


HOST_CASES = [
    ("api.example.com", "exact"),
    ("API.Example.COM", "exact"),
    ("api.example.com:8443", "exact"),
    ("api.example.com.", "exact"),
    ("Api.Example.Com:80", "exact"),
    ("a.example.com", "wildcard"),
    ("a.b.example.com", "wildcard"),
    ("A.EXAMPLE.COM", "wildcard"),
    ("a.example.com:81", "wildcard"),
    ("a.example.com.", "wildcard"),
    ("example.com", "any"),
    ("xexample.com", "any"),
    ("api.example.com.evil", "any"),
    ("api.example.co", "any"),
    ("sluice.test", "any"),
    ("127.0.0.1:8080", "any"),
]


def test_host_matching(sluice, backend, tmp_path):
    """A route's host is compared with the request's Host case-insensitively, ignoring the
    port and a trailing dot; `*.example.com` matches any name under example.com (one label
    or more) but not example.com itself; a route with no host matches any."""
    start(sluice, tmp_path, config({"app": [backend]}, [
        says("exact", host="api.example.com"),
        says("wildcard", host="*.example.com"),
        says("any"),
    ]))
    with Client(sluice.port) as c:
        got = [(host, said(c.request("GET", "/h", host=host))) for host, _ in HOST_CASES]
    assert got == HOST_CASES


def test_path_prefix_is_a_byte_prefix_of_the_path(sluice, backend, tmp_path):
    """path_prefix is a plain byte prefix of the path (the target before `?`): "/api"
    matches "/api", "/apix" and "/api/x?q", not "/ap" or "/API"; the query string plays no
    part in matching ("/x?/api" is path "/x")."""
    start(sluice, tmp_path, config({"app": [backend]}, [
        says("api", path_prefix="/api"),
        says("search", path_prefix="/search"),
    ]))
    cases = [
        ("/api", "api"), ("/apix", "api"), ("/api/x?q", "api"), ("/api?x=1", "api"),
        ("/api/", "api"), ("/search?q=/api", "search"), ("/ap", 404), ("/API", 404),
        ("/x/api", 404), ("/x?/api", 404), ("/sea?rch", 404), ("/?/api", 404),
    ]
    with Client(sluice.port) as c:
        got = [(target, said(c.request("GET", target))) for target, _ in cases]
    assert got == cases
    assert backend.requests == []


def test_methods_match_exactly(sluice, backend, tmp_path):
    """A route with `methods` matches only those: a GET-only route does not take HEAD or
    POST; a POST/PUT route takes both and nothing else."""
    start(sluice, tmp_path, config({"app": [backend]}, [
        says("read", path_prefix="/m", methods=["GET"]),
        says("write", path_prefix="/m", methods=["POST", "PUT"]),
    ]))
    with Client(sluice.port) as c:
        assert said(c.request("GET", "/m/1")) == "read"
        head = c.request("HEAD", "/m/1")
        assert head.status == 404 and head.body == b"", head
        assert said(c.request("DELETE", "/m/1")) == 404
        assert said(c.request("OPTIONS", "/m/1")) == 404
        assert said(c.request("GET", "/m/2")) == "read"
    # With a body: a local answer may close the connection, so one connection each.
    assert said(request(sluice.port, "POST", "/m/3", body=b"x=1")) == "write"
    assert said(request(sluice.port, "PUT", "/m/4", body=b"x=2")) == "write"
    assert backend.requests == []


def test_listeners_and_routes_restricted_to_them(sluice, backend, tmp_path):
    """Three listeners (two named, one not) each print a listening line, in config order,
    named ones ending in `listener=NAME`. A route restricted to `internal` matches only on
    that listener's port, one restricted to `public` only on its; the unnamed listener
    only gets routes without a listener condition."""
    start(sluice, tmp_path, config(
        {"app": [backend]},
        [
            says("internal only", listeners=["internal"], path_prefix="/internal"),
            says("public", listeners=["public"]),
            {"pool": "app"},
        ],
        listeners=[{"name": "public", "listen": "127.0.0.1:0"},
                   {"name": "internal", "listen": "127.0.0.1:0"},
                   "127.0.0.1:0"]))
    matches = sluice.listen_matches(3)
    assert [m.group("name") for m in matches] == ["public", "internal", None], \
        [m.group(0) for m in matches]
    public, internal, unnamed = (int(m.group("port")) for m in matches)
    assert len({public, internal, unnamed}) == 3 and public == sluice.port
    assert said(request(internal, "GET", "/internal/x")) == "internal only"
    assert said(request(public, "GET", "/internal/x")) == "public"
    assert Echoed(request(unnamed, "GET", "/internal/x")).target == "/internal/x"
    assert Echoed(request(internal, "GET", "/other")).target == "/other"
    assert said(request(public, "GET", "/other")) == "public"
    assert backend.targets() == ["/internal/x", "/other"]


def test_listen_flag_replaces_the_files_listeners(sluice, backend, tmp_path):
    """`--listen` on the command line replaces the file's listeners with one: a single
    listening line (the admin listener's line comes after the listeners'), and the file's
    own ports refuse connections."""
    p1, p2 = free_port(), free_port()
    path = write_zon(tmp_path / "routes.zon", config(
        {"app": [backend]}, [says("routed")],
        listeners=[{"name": "a", "listen": f"127.0.0.1:{p1}"}, f"127.0.0.1:{p2}"],
        admin={"listen": "127.0.0.1:0"}))
    sluice.start(args=["--config", path])  # The fixture's --listen 127.0.0.1:0.
    sluice.wait_for_line(ADMIN_RE, timeout=5.0)
    assert len(sluice.log_lines(r"^sluice: listening on ")) == 1, sluice.stderr_text()
    assert sluice.port not in (p1, p2)
    assert said(request(sluice.port, "GET", "/")) == "routed"
    assert is_refused(p1) and is_refused(p2)


def test_no_matching_route_is_a_404_on_a_usable_connection(sluice, backend, tmp_path):
    """A request no route matches gets sluice's own 404, framed, without closing the
    connection: further requests on the same socket are answered (and routed)."""
    start(sluice, tmp_path, config({"app": [backend]}, [
        {"host": "only.example", "pool": "app"},
    ]))
    with Client(sluice.port) as c:
        first = c.request("GET", "/nothing")
        assert first.status == 404, first
        assert first.framing in ("length", "chunked"), first
        assert "close" not in first.connection_tokens(), first
        second = c.request("GET", "/nothing/again")
        assert second.status == 404, second
        third = c.request("GET", "/routed", host="only.example")
        assert Echoed(third).target == "/routed"
        assert c.request("HEAD", "/nothing").status == 404
        assert Echoed(c.request("GET", "/routed/2", host="only.example")).target == "/routed/2"
    assert backend.targets() == ["/routed", "/routed/2"]


# ---------------------------------------------------------------------------------------
# Actions


PING = {"path_prefix": "/ping", "respond": {
    "status": 200, "content_type": "text/plain",
    "headers": {"Cache-Control": "no-store", "X-Served-By": "sluice"},
    "body": "pong\n"}}
TEAPOT = {"path_prefix": "/teapot", "respond": {"status": 418, "body": "short and stout\n"}}


def test_respond_status_headers_body_and_head(sluice, backend, tmp_path):
    """A respond route answers with its status, Content-Type, extra headers and body, and
    Content-Length = the body's length; HEAD gets the same head and no body. All of it on
    one keep-alive connection, nothing sent to a backend."""
    start(sluice, tmp_path, config({"app": [backend]}, [PING, TEAPOT]))
    with Client(sluice.port) as c:
        get = c.request("GET", "/ping")
        assert (get.status, get.body) == (200, b"pong\n"), get
        assert get.header("content-type") == "text/plain"
        assert get.header("cache-control") == "no-store"
        assert get.header("x-served-by") == "sluice"
        assert get.header_all("content-length") == ["5"], get
        assert "close" not in get.connection_tokens()

        head = c.request("HEAD", "/ping")
        assert head.status == 200 and head.body == b"", head
        for name in ("content-type", "cache-control", "x-served-by", "content-length"):
            assert head.header_all(name) == get.header_all(name), (name, head, get)

        tea = c.request("GET", "/teapot/earl-grey?milk=no")
        assert (tea.status, tea.body) == (418, b"short and stout\n"), tea
        assert tea.header_all("content-length") == [str(len(b"short and stout\n"))]

        for i in range(5):  # Still the same connection.
            again = c.request("GET", f"/ping?n={i}")
            assert (again.status, again.body) == (200, b"pong\n"), again
        # Nothing else on the wire: no stray bytes after the HEAD or the bodies.
        assert c.read_some(0.2) == b""
    assert backend.requests == []


def test_respond_to_a_post_with_a_body_closes_the_connection(sluice, backend, tmp_path):
    """A POST with a body to a respond route gets the response, with `Connection: close`,
    and then sluice closes the connection (it does not read the body)."""
    start(sluice, tmp_path, config({"app": [backend]}, [PING]))
    with Client(sluice.port) as c:
        assert c.request("GET", "/ping").status == 200  # Keep-alive until the POST.
        r = c.request("POST", "/ping", body=b"p" * 3000)
        assert (r.status, r.body) == (200, b"pong\n"), r
        assert "close" in r.connection_tokens(), r
        assert c.wait_closed(3.0), "sluice did not close after answering a POST with a body"
    assert backend.requests == []


def test_redirects(sluice, backend, tmp_path):
    """A redirect route answers with its status (302 by default) and Location: the
    location as given, or followed by the request's path and query with keep_path; the
    body is empty (Content-Length: 0) and the connection stays open."""
    start(sluice, tmp_path, config({"app": [backend]}, [
        {"path_prefix": "/old", "redirect": {"location": "https://example.com/new"}},
        {"path_prefix": "/moved", "redirect": {"location": "https://example.com/new",
                                               "status": 301, "keep_path": True}},
        {"path_prefix": "/temp", "redirect": {"location": "/elsewhere", "status": 307}},
    ]))
    with Client(sluice.port) as c:
        r = c.request("GET", "/old/page?x=1")
        assert r.status == 302, r
        assert r.header_all("location") == ["https://example.com/new"], r
        assert r.header_all("content-length") == ["0"] and r.body == b"", r

        r = c.request("GET", "/moved/a/b?q=1&r=2")
        assert r.status == 301, r
        assert r.header_all("location") == ["https://example.com/new/moved/a/b?q=1&r=2"], r
        assert r.header_all("content-length") == ["0"] and r.body == b"", r

        r = c.request("GET", "/moved")
        assert r.header_all("location") == ["https://example.com/new/moved"], r

        r = c.request("HEAD", "/temp/x")
        assert r.status == 307 and r.header_all("location") == ["/elsewhere"], r
        assert "close" not in r.connection_tokens()
    assert backend.requests == []


def test_redirect_to_the_requests_own_host(sluice, backend, tmp_path):
    """`redirect = {scheme}`: Location is the scheme, the request's host without its port
    (or the route's port), and its target; an absolute-form target's authority wins over
    Host (RFC 9112 §3.2.2); HTTP/1.0 without Host is a 400 that says why; a Host with bytes
    an authority cannot have never reaches the Location (the parser refuses it)."""
    start(sluice, tmp_path, config({"app": [backend]}, [
        {"path_prefix": "/p/", "redirect": {"scheme": "https", "port": 8443}},
        {"redirect": {"scheme": "https", "status": 308}},
    ]))
    with Client(sluice.port) as c:
        r = c.request("GET", "/a/b?q=1&r=%2F", host="www.example.com:8080")
        assert r.status == 308, r
        assert r.header_all("location") == ["https://www.example.com/a/b?q=1&r=%2F"], r
        assert r.header_all("content-length") == ["0"] and "close" not in r.connection_tokens(), r
        r = c.request("GET", "/p/x", host="[2001:db8::7]:80")
        assert (r.status, r.header_all("location")) == (302, ["https://[2001:db8::7]:8443/p/x"]), r
        r = c.request("GET", "http://Other.example:81/abs?x", host="www.example.com")
        assert r.header_all("location") == ["https://Other.example/abs?x"], r
        r = c.request("HEAD", "/h", host="example.com")
        assert r.header_all("location") == ["https://example.com/h"], r
    with Client(sluice.port) as c:
        c.send(b"GET /old HTTP/1.0\r\n\r\n")
        r = c.read_response()
        assert r.status == 400 and b"has no Host field" in r.body, r
    for bad in (b"evil.com/x", b"a@b", b"a b"):
        with Client(sluice.port) as c:
            c.send(b"GET / HTTP/1.1\r\nHost: " + bad + b"\r\n\r\n")
            r = c.read_response()
            assert r.status == 400 and r.header_all("location") == [], (bad, r)
    assert backend.requests == []


def test_pool_routes_reach_their_backends(sluice, make_backend, tmp_path):
    """Requests matched to a pool route reach that pool's backends (round robin inside
    the pool), with target, Host and body as sent; unmatched ones reach none."""
    a = make_backend(echo(), name="A")
    w1, w2 = make_backend(echo(), name="W1"), make_backend(echo(), name="W2")
    start(sluice, tmp_path, config({"api": [a], "web": [w1, w2]}, [
        {"host": "api.example.com", "pool": "api"},
        {"path_prefix": "/static/", "pool": "web"},
        {"methods": ["POST"], "pool": "api"},
    ]))
    with Client(sluice.port) as c:
        e = Echoed(c.request("GET", "/v1/users?id=7", host="api.example.com"))
        assert (e.backend, e.target, e.header("host")) == ("A", "/v1/users?id=7",
                                                          "api.example.com")
        names = [Echoed(c.request("GET", f"/static/app{i}.js", host="www.example.com")).backend
                 for i in range(4)]
        assert sorted(names) == ["W1", "W1", "W2", "W2"], names
        e = Echoed(c.request("GET", "/static/x", host="api.example.com"))
        assert e.backend == "A", "the host route comes first"
        assert c.request("GET", "/other", host="www.example.com").status == 404
    e = Echoed(request(sluice.port, "POST", "/submit", body=b"form=1"))
    assert (e.backend, e.target, e.body) == ("A", "/submit", b"form=1")
    assert [r.target for r in a.requests] == ["/v1/users?id=7", "/static/x", "/submit"]
    assert sorted(r.target for r in w1.requests + w2.requests) == \
        [f"/static/app{i}.js" for i in range(4)]


# ---------------------------------------------------------------------------------------
# Metrics


@pytest.mark.time_limit(30)
def test_per_pool_and_per_route_metrics(sluice, make_backend, tmp_path):
    """/metrics counts requests per pool (`sluice_requests_total{pool}`) and per route
    (`sluice_route_requests_total{route}`, unnamed routes labelled by their position), local
    answers (`sluice_local_responses_total`: respond and redirect) and requests no route
    matched (`sluice_requests_unrouted_total`)."""
    a, w = make_backend(echo(), name="A"), make_backend(echo(), name="W")
    start(sluice, tmp_path, config({"api": [a], "web": [w]}, [
        {"name": "api", "host": "api.example.com", "pool": "api"},
        says("pong", path_prefix="/ping"),
        {"path_prefix": "/web/", "pool": "web"},
        {"name": "old", "path_prefix": "/old", "redirect": {"location": "https://x.test/"}},
    ], admin={"listen": "127.0.0.1:0"}))
    admin_port = int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))
    with Client(sluice.port) as c:
        for i in range(3):
            assert Echoed(c.request("GET", f"/a/{i}", host="api.example.com")).backend == "A"
        for i in range(4):
            assert said(c.request("GET", f"/ping/{i}")) == "pong"
        for i in range(2):
            assert Echoed(c.request("GET", f"/web/{i}")).backend == "W"
        assert c.request("GET", "/old").status == 302

    expected = {("sluice_requests_total", "pool", "api"): 3,
                ("sluice_requests_total", "pool", "web"): 2,
                ("sluice_route_requests_total", "route", "api"): 3,
                ("sluice_route_requests_total", "route", "1"): 4,
                ("sluice_route_requests_total", "route", "2"): 2,
                ("sluice_route_requests_total", "route", "old"): 1}

    def counts(families):
        return {k: value(families, k[0], **{k[1]: k[2]}) for k in expected}

    m = scrape(admin_port)
    missing = {"sluice_requests_total", "sluice_route_requests_total",
               "sluice_local_responses_total", "sluice_requests_unrouted_total"} - set(m)
    assert not missing, f"metric families missing: {sorted(missing)}"

    assert wait_until(lambda: counts(scrape(admin_port)) == expected, 5.0), \
        counts(scrape(admin_port))
    m = scrape(admin_port)
    assert family_sum(m, "sluice_local_responses_total") == 5  # 4 respond + 1 redirect.
    assert family_sum(m, "sluice_requests_unrouted_total") == 0

    with Client(sluice.port) as c:
        for i in range(5):
            assert c.request("GET", f"/nowhere/{i}").status == 404
    assert wait_until(
        lambda: family_sum(scrape(admin_port), "sluice_requests_unrouted_total") == 5, 5.0)
    m = scrape(admin_port)
    assert counts(m) == expected, "unrouted requests counted against a route or pool"
    assert family_sum(m, "sluice_local_responses_total") in (5, 10), \
        "local answers: respond and redirect (and perhaps the 404s), nothing else"


# ---------------------------------------------------------------------------------------
# sluice check


ROUTE_MISTAKES = """\
.{
    .listen = "127.0.0.1:0",
    .pools = .{
        .api = .{ .backends = .{"127.0.0.1:9001"} },
    },
    .routes = .{
        .{ .host = "ok.example.com", .pool = "api" },
        .{ .path_prefix = "/a", .pool = "nope" },
        .{ .path_prefix = "/b", .pool = "api", .respond = .{ .body = "x" } },
        .{ .host = "Upper.Example.com", .pool = "api" },
        .{ .methods = .{ "GET", "CONNECT" }, .pool = "api" },
        .{ .path_prefix = "/c", .redirect = .{ .location = "https://example.com/" } },
        .{ .methods = .{ "GET", "HEAD" }, .respond = .{ .body = "ok" } },
    },
}
"""
# Unknown pool, two actions, an uppercase host, CONNECT in methods; lines 7, 12 and 13 are
# valid.
ROUTE_MISTAKE_LINES = {8, 9, 10, 11}


def test_check_reports_every_route_mistake_with_its_line(sluice_bin, tmp_path):
    """`sluice check` on a file with route mistakes (a pool that does not exist, a route
    with two actions, an uppercase host, CONNECT in methods) exits 1 and prints a
    FILE:LINE:COL line for each, at the route's line, and none for the valid routes."""
    path = tmp_path / "routes.zon"
    path.write_text(ROUTE_MISTAKES)
    code, out, err = check(sluice_bin, path)
    assert code == 1, (code, out, err)
    lines = err.splitlines()
    rx = re.compile(rf"^{re.escape(str(path))}:(\d+):(\d+): \S")
    matches = [rx.match(ln) for ln in lines]
    assert all(matches), f"every line is FILE:LINE:COL: message:\n{err}"
    assert {int(m.group(1)) for m in matches} == ROUTE_MISTAKE_LINES, err
    assert all(int(m.group(2)) >= 1 for m in matches), err
    assert "ok" not in out, out

    # The same file with the four mistakes fixed checks clean.
    fixed = (ROUTE_MISTAKES.replace('"nope"', '"api"')
             .replace('.pool = "api", .respond = .{ .body = "x" }', '.pool = "api"')
             .replace("Upper.Example.com", "upper.example.com")
             .replace('"GET", "CONNECT"', '"GET", "DELETE"'))
    path.write_text(fixed)
    code, out, err = check(sluice_bin, path)
    assert (code, out) == (0, f"{path}: ok\n"), err


# ---------------------------------------------------------------------------------------
# No allocation per routed request


def _mixed_routed_load(port, tid, count, errors, reconnect_every=50):
    """`count` requests through every kind of route: pool by host, respond (GET and HEAD),
    redirect with keep_path, pool by host wildcard and path, POST to a pool, and 404s."""
    done = 0
    c = Client(port, timeout=10)
    try:
        while done < count:
            if done and done % reconnect_every == 0:
                c.close()
                c = Client(port, timeout=10)
            kind, tag = (done + tid) % 7, f"{tid}-{done}"
            if kind == 0:
                e = Echoed(c.request("GET", f"/v1/{tag}", host="api.example.com"))
                assert (e.backend, e.target) == ("A", f"/v1/{tag}"), e.data
            elif kind == 1:
                r = c.request("GET", f"/ping/{tag}")
                assert (r.status, r.body) == (200, b"pong\n"), r
            elif kind == 2:
                r = c.request("HEAD", "/ping")
                assert r.status == 200 and r.header("content-length") == "5", r
            elif kind == 3:
                r = c.request("GET", f"/old/{tag}?x=1")
                assert r.status == 301, r
                assert r.header("location") == f"https://example.com/new/old/{tag}?x=1", r
            elif kind == 4:
                e = Echoed(c.request("GET", f"/static/{tag}", host="www.example.com"))
                assert e.backend in ("W1", "W2") and e.target == f"/static/{tag}", e.data
            elif kind == 5:
                e = Echoed(c.request("POST", f"/submit/{tag}", body=tag.encode()))
                assert (e.backend, e.body) == ("A", tag.encode()), e.data
            else:
                assert c.request("GET", f"/nowhere/{tag}").status == 404
            done += 1
    except Exception as e:  # noqa: BLE001 - collected and reported by the test
        errors.append(f"thread {tid} after {done} requests: {e!r}")
    finally:
        c.close()


@pytest.mark.time_limit(90)
def test_no_heap_allocations_after_1000_routed_requests(sluice, make_backend, tmp_path):
    """1,000 requests over 4 connections through pool, respond, redirect and unmatched
    routes (with --workers 2): the stats line and the exit line both say 0 heap allocations
    after start-up."""
    a = make_backend(echo(), name="A")
    w1, w2 = make_backend(echo(), name="W1"), make_backend(echo(), name="W2")
    start(sluice, tmp_path, config({"api": [a], "web": [w1, w2]}, [
        {"name": "api", "host": "api.example.com", "pool": "api"},
        {"name": "ping", "path_prefix": "/ping", "methods": ["GET", "HEAD"],
         "respond": {"content_type": "text/plain", "headers": {"Cache-Control": "no-store"},
                     "body": "pong\n"}},
        {"name": "old", "path_prefix": "/old/",
         "redirect": {"location": "https://example.com/new", "status": 301,
                      "keep_path": True}},
        {"name": "static", "host": "*.example.com", "path_prefix": "/static/",
         "pool": "web"},
        {"name": "writes", "methods": ["POST"], "pool": "api"},
    ]), workers=2)
    errors, threads = [], 4
    ts = [threading.Thread(target=_mixed_routed_load, args=(sluice.port, i, 250, errors),
                           daemon=True) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60.0)
    assert not any(t.is_alive() for t in ts), "load threads did not finish"
    assert not errors, errors[:5]
    st = assert_quiescent(sluice)
    print(f"stats after 1000 routed requests: {st}")
    assert sluice.stop(timeout=10.0) == 0
    assert sluice.exit_allocations() == 0, sluice.stderr_text()
    for b in (a, w1, w2):
        assert b.errors == [], (b, b.errors)


def test_options_asterisk_goes_where_a_route_asks_for_it(sluice, make_backend, tmp_path):
    """`OPTIONS * HTTP/1.1` is forwarded to the pool of the route with `path_prefix = "*"`; a
    path prefix such as "/" does not match it."""
    from client import Echoed, request
    star, site = make_backend(name="star"), make_backend(name="site")
    path = tmp_path / "star.zon"
    path.write_text(f""".{{
    .listen = "127.0.0.1:0",
    .pools = .{{ .star = .{{ .backends = .{{"{star.address}"}} }}, .site = .{{ .backends = .{{"{site.address}"}} }} }},
    .routes = .{{
        .{{ .path_prefix = "/", .pool = "site" }},
        .{{ .path_prefix = "*", .pool = "star" }},
    }},
}}
""")
    sluice.start_config(path)
    e = Echoed(request(sluice.port, "OPTIONS", "*"))
    assert e.backend == "star" and e.target == "*" and e.method == "OPTIONS"
    assert Echoed(request(sluice.port, "GET", "/x")).backend == "site"


def test_options_asterisk_without_routes_goes_to_the_pool(sluice, backend):
    from client import Echoed, request
    sluice.start([backend])
    e = Echoed(request(sluice.port, "OPTIONS", "*"))
    assert e.target == "*" and e.method == "OPTIONS"
