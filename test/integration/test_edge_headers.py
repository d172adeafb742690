"""Header rules (issue 24): request fields set, added and removed before the pool sees them,
response fields before the client sees them, at the top level, per route and from the command
line; the variables; request ids generated, kept, forwarded and logged; fields sluice owns
refused by `check` and by the command line; reload; no heap allocation per request.
"""

import json
import re
import signal
import threading

import pytest

from backends import echo, fixed
from client import Client, request
from conftest import assert_quiescent, write_zon
from test_access_log import wait_for_lines, file_lines
from test_admin import scrape, value
from test_config_docs import check
from test_reload import reload

HEX32 = re.compile(r"^[0-9a-f]{32}$")


def fields(r):
    """The fields an echo backend received, as (name, value) pairs."""
    return [tuple(f) for f in r.json()["headers"]]


def named(pairs, name):
    return [v for k, v in pairs if k.lower() == name.lower()]


def base(backend, **top):
    cfg = {"listen": "127.0.0.1:0", "pools": {"app": {"backends": [backend.address]}}}
    cfg.update(top)
    return cfg


def test_request_rules_set_add_remove_and_variables(sluice, backend, tmp_path):
    """Top-level and route rules merge: a route's set replaces the top level's field of that
    name, its add keeps them; the client's fields of a set or removed name never reach the
    pool, whatever their case; variables expand to the request's values."""
    cfg = base(backend,
               request_headers={"set": {"X-Env": "prod", "X-Via": "$scheme://$host from $client_ip"},
                                "add": {"X-Tag": "top"}, "remove": ["X-Debug"]},
               routes=[{"path_prefix": "/api/", "pool": "app",
                        "request_headers": {"set": {"X-Env": "api"}, "add": {"X-Tag": "api"}}},
                       {"pool": "app"}])
    sluice.start_config(write_zon(tmp_path / "h.zon", cfg))
    sent = [("x-env", "dev"), ("X-DEBUG", "1"), ("X-Keep", "yes")]
    got = fields(request(sluice.port, "GET", "/web?a=1", headers=sent))
    assert named(got, "X-Env") == ["prod"]
    assert named(got, "X-Debug") == []
    assert named(got, "X-Keep") == ["yes"]
    assert named(got, "X-Tag") == ["top"]
    assert named(got, "X-Via") == ["http://sluice.test from 127.0.0.1"]  # the client's Host
    got = fields(request(sluice.port, "GET", "/api/x", headers=sent))
    assert named(got, "X-Env") == ["api"]
    assert named(got, "X-Tag") == ["top", "api"]
    assert named(got, "X-Debug") == []


def test_response_rules_set_add_remove(sluice, make_backend, tmp_path):
    """HSTS and friends are added, Server and X-Powered-By removed, Cache-Control replaced;
    the framing stays sluice's and the body arrives whole."""
    b = make_backend(fixed(200, headers=[("Server", "gunicorn"), ("X-Powered-By", "php"),
                                         ("Cache-Control", "public"), ("ETag", '"e1"')],
                           body=b"hello"))
    cfg = base(b, response_headers={
        "set": {"Strict-Transport-Security": "max-age=63072000; includeSubDomains",
                "X-Frame-Options": "DENY", "Cache-Control": "no-store"},
        "remove": ["Server", "X-Powered-By"]})
    sluice.start_config(write_zon(tmp_path / "h.zon", cfg))
    with Client(sluice.port) as c:
        for _ in range(3):  # keep-alive: the same rules on every response
            r = c.request("GET", "/")
            assert r.status == 200 and r.body == b"hello", r
            assert r.header("server") is None and r.header("x-powered-by") is None
            assert r.header_all("cache-control") == ["no-store"]
            assert r.header("strict-transport-security") == "max-age=63072000; includeSubDomains"
            assert r.header("x-frame-options") == "DENY"
            assert r.header("etag") == '"e1"'
            assert r.header_all("content-length") == ["5"]


def test_response_rules_grow_a_large_head_without_losing_the_body(sluice, make_backend, tmp_path):
    """A response head that already fills most of the headroom grows by the rules' fields:
    the body bytes received with it move, none are lost or overwritten."""
    many = [(f"X-F{i}", "v" * 40) for i in range(60)]
    body = bytes(range(256)) * 40
    b = make_backend(fixed(200, headers=many, body=body))
    cfg = base(b, response_headers={"add": {f"X-Add-{i}": "a" * 100 for i in range(8)}})
    sluice.start_config(write_zon(tmp_path / "h.zon", cfg))
    r = request(sluice.port, "GET", "/")
    assert r.status == 200 and r.body == body
    assert len([k for k, _ in r.headers if k.startswith("X-Add-")]) == 8
    assert len([k for k, _ in r.headers if k.startswith("X-F")]) == 60


def test_request_ids_generated_kept_forwarded_logged(sluice, backend, tmp_path):
    """With `request_id`, a request without the field gets a generated 32-hex id, one with a
    plain id keeps it, one with an id that is not plain (quotes, too long) gets a new one; the
    pool sees exactly one field, a response rule can return it, the JSON log has it and
    /metrics counts the generated ones."""
    log = tmp_path / "access.log"
    cfg = base(backend, request_id="X-Request-Id",
               response_headers={"set": {"X-Request-Id": "$request_id"}},
               access_log={"target": str(log), "format": "json"},
               admin={"listen": "127.0.0.1:0"})
    sluice.start_config(write_zon(tmp_path / "h.zon", cfg))
    r = request(sluice.port, "GET", "/a")
    generated = named(fields(r), "X-Request-Id")
    assert len(generated) == 1 and HEX32.match(generated[0]), generated
    assert r.header("x-request-id") == generated[0]
    r = request(sluice.port, "GET", "/b", headers=[("x-request-id", "abc-123_x.y")])
    assert named(fields(r), "X-Request-Id") == ["abc-123_x.y"]
    assert r.header("x-request-id") == "abc-123_x.y"
    for bad in ['a"b', "x" * 65, "a b"]:
        r = request(sluice.port, "GET", "/c", headers=[("X-Request-Id", bad)])
        got = named(fields(r), "X-Request-Id")
        assert len(got) == 1 and HEX32.match(got[0]), (bad, got)
    lines = wait_for_lines(lambda: file_lines(log), 5)
    ids = [json.loads(line)["request_id"] for line in lines]
    assert ids[0] == generated[0] and ids[1] == "abc-123_x.y"
    assert all(HEX32.match(i) for i in ids[2:])
    admin_port = int(sluice.wait_for_line(re.compile(r"admin listening on 127\.0\.0\.1:(\d+)")).group(1))
    assert value(scrape(admin_port), "sluice_request_ids_generated_total") == 4


def test_command_line_flags(sluice, make_backend):
    """`--request-header`, `--response-header` and `--remove-response-header` (repeatable)
    apply to the command line's pool."""
    b = make_backend(echo(extra_headers=[("Server", "app"), ("X-Powered-By", "x")]))
    sluice.start([b], args=["--request-header", "X-Env: prod",
                            "--request-header", "X-From: $client_ip",
                            "--response-header", "X-Frame-Options: DENY",
                            "--remove-response-header", "Server",
                            "--remove-response-header", "x-powered-by"])
    r = request(sluice.port, "GET", "/", headers=[("X-Env", "dev")])
    assert named(fields(r), "X-Env") == ["prod"]
    assert named(fields(r), "X-From") == ["127.0.0.1"]
    assert r.header("x-frame-options") == "DENY"
    assert r.header("server") is None and r.header("x-powered-by") is None


@pytest.mark.parametrize("flag,value,message", [
    ("--request-header", "Host: evil", "sluice writes Host and the forwarding fields"),
    ("--request-header", "X-Forwarded-For: 1.2.3.4", "sluice writes Host and the forwarding fields"),
    ("--response-header", "Content-Length: 0", "framing and connection fields"),
    ("--response-header", "Transfer-Encoding: chunked", "framing and connection fields"),
    ("--remove-response-header", "Connection", "framing and connection fields"),
    ("--request-header", "X-A: $nope", "unknown variable"),
    ("--request-header", "X-A: a\r\nX-Injected: 1", "control characters"),
    ("--request-header", "X-A b", "expected NAME: VALUE"),
    ("--request-id", "Content-Length", "framing and connection fields"),
])
def test_command_line_refuses_owned_fields_and_bad_values(sluice_bin, backend, flag, value, message):
    """A rule on a field sluice owns, with CR/LF in its value or an unknown variable is a
    usage error (exit 2) naming the flag, before anything starts."""
    import subprocess
    done = subprocess.run([sluice_bin, "--listen", "127.0.0.1:0", "--backend", backend.address,
                           flag, value], capture_output=True, text=True, timeout=10)
    assert done.returncode == 2, done
    assert flag in done.stderr and message in done.stderr, done.stderr


def test_check_names_each_bad_rule_at_its_line_and_column(sluice_bin, tmp_path):
    """`sluice check` reports every refused rule at its line and column."""
    text = """.{
    .request_headers = .{ .set = .{ .Host = "evil" }, .remove = .{"Content-Length"} },
    .response_headers = .{ .add = .{ .@"X-A" = "a\\r\\nb", .@"X-B" = "$who" } },
    .pools = .{ .app = .{ .backends = .{"127.0.0.1:9001"} } },
    .routes = .{.{ .pool = "app", .request_headers = .{ .sets = .{} } }},
}
"""
    path = tmp_path / "bad.zon"
    path.write_text(text)
    code, out, err = check(sluice_bin, path)
    assert code == 1, (out, err)
    lines = err.strip().splitlines() or out.strip().splitlines()
    joined = "\n".join(lines)
    assert f"{path}:2:37: sluice writes Host" in joined, joined
    assert f"{path}:2:67: sluice writes the framing" in joined, joined
    assert f"{path}:3:48: a header field value cannot hold control characters" in joined, joined
    assert f"{path}:3:68: unknown variable" in joined, joined
    assert f"{path}:5:57: unknown key \"sets\"" in joined, joined


def test_reload_applies_new_rules(sluice, backend, tmp_path):
    """A reload that changes the rules applies them to new requests."""
    path = write_zon(tmp_path / "h.zon", base(backend, request_headers={"set": {"X-Gen": "1"}}))
    sluice.start_config(path)
    assert named(fields(request(sluice.port, "GET", "/")), "X-Gen") == ["1"]
    reload(sluice, path, base(backend, request_headers={"set": {"X-Gen": "2"}},
                              response_headers={"set": {"X-Served": "yes"}}), 2)
    r = request(sluice.port, "GET", "/")
    assert named(fields(r), "X-Gen") == ["2"] and r.header("x-served") == "yes"


@pytest.mark.time_limit(90)
def test_no_heap_allocations_with_rules_and_request_ids(sluice, make_backend, tmp_path):
    """600 requests through request and response rules with variables, request ids and a
    path rewrite, on 3 connections: 0 heap allocations after start-up."""
    b = make_backend(echo(extra_headers=[("Server", "app")]))
    cfg = base(b, request_id="X-Request-Id",
               request_headers={"set": {"X-Via": "$scheme $host $client_ip $request_id"}},
               response_headers={"set": {"X-Request-Id": "$request_id"}, "remove": ["Server"]},
               routes=[{"path_prefix": "/r/", "pool": "app", "strip_prefix": True,
                        "response_headers": {"add": {"X-Route": "r"}}}, {"pool": "app"}])
    sluice.start_config(write_zon(tmp_path / "h.zon", cfg), workers=2)
    errors = []

    def load(n):
        try:
            with Client(sluice.port) as c:
                for i in range(n):
                    r = c.request("GET", f"/r/{i}" if i % 2 else f"/{i}")
                    if r.status != 200 or r.header("server") is not None or not r.header("x-request-id"):
                        errors.append(r)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    ts = [threading.Thread(target=load, args=(200,), daemon=True) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    assert not errors, errors[:3]
    assert_quiescent(sluice)
    assert sluice.stop(timeout=10.0) == 0
    assert sluice.exit_allocations() == 0, sluice.stderr_text()


# ---------------------------------------------------------------------------------------
# Path rewrites


def rewrite_config(backend, **top):
    return base(backend, routes=[
        {"path_prefix": "/api/v1/", "rewrite_prefix": "/v2/", "pool": "app"},
        {"path_prefix": "/api/", "strip_prefix": True, "pool": "app"},
        {"path_prefix": "/x", "rewrite_prefix": "/", "pool": "app"},
        {"pool": "app"}], **top)


def test_path_rewrites_keep_query_and_encoding_byte_for_byte(sluice, backend, tmp_path):
    """strip_prefix and rewrite_prefix change only the prefix: the rest, the query and every
    percent-encoding reach the pool as sent; one slash at the seam; other routes untouched;
    the JSON log shows the target sent and the one forwarded."""
    log = tmp_path / "access.log"
    sluice.start_config(write_zon(tmp_path / "r.zon", rewrite_config(
        backend, access_log={"target": str(log), "format": "json"})))
    cases = [
        ("/api/users?id=1&next=%2Fhome", "/users?id=1&next=%2Fhome"),
        ("/api/v1/%C3%A9/a%20b?q=%41&r=%7e", "/v2/%C3%A9/a%20b?q=%41&r=%7e"),
        ("/api/", "/"),
        ("/x/y?z", "/y?z"),
        ("/xyz", "/yz"),
        ("/other/%2e?a", "/other/%2e?a"),
    ]
    for sent, forwarded in cases:
        r = request(sluice.port, "GET", sent)
        assert r.status == 200, (sent, r)
        assert r.json()["target"] == forwarded, (sent, r.json()["target"])
    lines = [json.loads(line) for line in wait_for_lines(lambda: file_lines(log), len(cases))]
    for (sent, forwarded), line in zip(cases, lines):
        assert line["target"] == sent
        if sent.startswith("/other"):
            assert "upstream_target" not in line
        else:
            assert line["upstream_target"] == forwarded, line


@pytest.mark.parametrize("target", ["/%61pi/users", "//api/users", "/z/../api/users",
                                    "/api/v1/%2e%2e/v1/x", "/api/./x", "/api/%7Euser", "/api/%c3%a9"])
def test_path_matched_only_in_normal_form_is_refused(sluice, backend, tmp_path, target):
    """A rewriting route answers 400 to a path not in normal form (the pool sees nothing):
    with the prefix replaced, a dot segment could climb out of the replacement at the backend
    (`/v2/%2e%2e/v1/x`), and sluice never re-encodes a path to rewrite it."""
    sluice.start_config(write_zon(tmp_path / "r.zon", rewrite_config(backend)))
    r = request(sluice.port, "GET", target)
    assert r.status == 400, r
    assert backend.requests == []


def test_combined_log_shows_the_rewritten_target_and_request_id(sluice, backend, tmp_path):
    """A combined line ends with `request_id=ID` and `upstream_target="..."` when they apply."""
    log = tmp_path / "access.log"
    sluice.start_config(write_zon(tmp_path / "r.zon", rewrite_config(
        backend, access_log={"target": str(log)}, request_id="X-Request-Id")))
    request(sluice.port, "GET", "/api/a?b=1", headers=[("X-Request-Id", "req-1")])
    line = wait_for_lines(lambda: file_lines(log), 1)[0]
    assert line.endswith(' request_id=req-1 upstream_target="/a?b=1"'), line
    assert '"GET /api/a?b=1 HTTP/1.1"' in line


def test_check_refuses_rewrites_that_cannot_apply(sluice_bin, tmp_path):
    """A rewrite without a path_prefix, on a route that does not forward, or to something not
    a path is a mistake at its line and column."""
    text = """.{
    .pools = .{ .app = .{ .backends = .{"127.0.0.1:9001"} } },
    .routes = .{
        .{ .strip_prefix = true, .pool = "app" },
        .{ .path_prefix = "/r/", .rewrite_prefix = "/", .respond = .{ .body = "x" } },
        .{ .path_prefix = "/a/", .rewrite_prefix = "v2/", .pool = "app" },
        .{ .path_prefix = "/b/", .rewrite_prefix = "/v2?x", .pool = "app" },
    },
}
"""
    path = tmp_path / "bad.zon"
    path.write_text(text)
    code, out, err = check(sluice_bin, path)
    assert code == 1, (out, err)
    assert f"{path}:4:9: a route rewrites its path prefix" in err, err
    assert f"{path}:5:9: a route rewrites its path (rewrite_prefix, strip_prefix) only when it forwards" in err, err
    assert f"{path}:6:52: a rewritten prefix starts with /" in err, err
    assert f"{path}:7:52: a rewritten prefix is visible ASCII" in err, err
