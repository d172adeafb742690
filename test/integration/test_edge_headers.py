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
    """600 requests through request and response rules with variables and request ids, on 3
    connections: 0 heap allocations after start-up."""
    b = make_backend(echo(extra_headers=[("Server", "app")]))
    cfg = base(b, request_id="X-Request-Id",
               request_headers={"set": {"X-Via": "$scheme $host $client_ip $request_id"}},
               response_headers={"set": {"X-Request-Id": "$request_id"}, "remove": ["Server"]},
               routes=[{"path_prefix": "/r/", "pool": "app",
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
