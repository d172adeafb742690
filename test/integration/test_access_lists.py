"""Allow and deny lists (issue 24): at the top level (`--allow`, `--deny`), per listener and
per route, adding up; a refused client gets a 403, counted in /metrics; the client is the
address sluice resolved, a PROXY protocol header's included; mistakes name their line and
column or their flag; a reload changes the lists. Every test runs once per I/O backend.
"""

import re
import socket
import subprocess

from client import read_response, request
from conftest import free_port, write_zon
from test_admin import ADMIN_RE, scrape, value
from test_config_docs import check
from test_proxy_protocol import get_after, v1
from test_reload import reload


def get_from(port, source, path="/"):
    """A GET from the loopback address `source` (127.0.0.0/8 is all the machine's own)."""
    sock = socket.socket()
    sock.settimeout(5)
    try:
        sock.bind((source, 0))
        sock.connect(("127.0.0.1", port))
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: a\r\n\r\n".encode())
        return read_response(sock)
    finally:
        sock.close()


def test_command_line_lists_refuse_with_403_and_count(sluice, backend):
    """`--allow 127.0.0.0/30 --deny 127.0.0.2`: .1 is served, .2 is denied though allowed,
    .5 is outside the allow list; each 403 is counted."""
    sluice.start([backend], args=["--allow", "127.0.0.0/30", "--deny", "127.0.0.2",
                                  "--admin", "127.0.0.1:0"])
    admin = int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))
    assert get_from(sluice.port, "127.0.0.1").status == 200
    for source in ("127.0.0.2", "127.0.0.5"):
        r = get_from(sluice.port, source)
        assert r.status == 403, r
        assert r.body == b"403 Forbidden: this address may not use this service\n"
    assert value(scrape(admin), "sluice_requests_forbidden_total") == 2
    assert len(backend.requests) == 1


def test_listener_and_route_lists_add_up_and_reload(sluice, backend, tmp_path):
    """A listener's list and a route's both apply; a reload that widens the route's list
    serves the client it refused."""
    port = free_port()
    cfg = {"listeners": [{"listen": f"127.0.0.1:{port}", "deny": ["127.0.0.9"]}],
           "pools": {"app": {"backends": [backend.address]}},
           "routes": [{"path_prefix": "/admin/", "pool": "app", "allow": ["127.0.0.1", "::1"]},
                      {"pool": "app"}]}
    path = write_zon(tmp_path / "acl.zon", cfg)
    sluice.start_config(path)
    assert request(port, "GET", "/admin/x").status == 200  # from 127.0.0.1
    assert get_from(port, "127.0.0.3").status == 200  # the default route: no allow list
    assert get_from(port, "127.0.0.9").status == 403  # the listener's deny
    assert get_from(port, "127.0.0.3", "/admin/x").status == 403  # the route's allow list
    cfg["routes"][0]["allow"] = ["127.0.0.0/24"]
    reload(sluice, path, cfg, 2)
    assert get_from(port, "127.0.0.3", "/admin/x").status == 200
    assert get_from(port, "127.0.0.9", "/admin/x").status == 403  # still the listener's deny


def test_the_proxy_protocol_address_is_the_one_checked(sluice, backend):
    """Behind a load balancer the lists see the client it names, not the balancer."""
    sluice.start([backend], args=["--proxy-protocol", "--allow", "192.0.2.0/24"])
    assert get_after(sluice.port, v1("192.0.2.44")).status == 200
    assert get_after(sluice.port, v1("198.51.100.1")).status == 403
    assert get_after(sluice.port, v1("2001:db8::1")).status == 403


def assert_mistakes(sluice_bin, tmp_path, route_key, file_message, flag, flag_value, flag_message):
    """A route with `route_key` (ZON text) fails `check` at line 3 with `file_message` (a
    pattern); `flag flag_value` fails the command line with `flag_message`."""
    bad = tmp_path / "bad.zon"
    bad.write_text('.{\n    .pools = .{ .app = .{ .backends = .{"127.0.0.1:9"} } },\n'
                   f'    .routes = .{{ .{{ .pool = "app", {route_key} }} }},\n}}\n')
    rc, out, err = check(sluice_bin, bad)
    assert rc == 1
    assert re.search(r"bad\.zon:3:\d+: " + file_message, out + err), out + err
    done = subprocess.run([sluice_bin, "--backend", "127.0.0.1:9", flag, flag_value],
                          capture_output=True, text=True, timeout=10)
    assert done.returncode != 0
    assert f'{flag}: invalid value "{flag_value}": {flag_message}' in done.stderr, done.stderr


def test_mistakes_name_their_line_column_or_flag(sluice_bin, tmp_path):
    assert_mistakes(sluice_bin, tmp_path, '.allow = .{ "10.0.0.0/33" }', "invalid CIDR",
                    "--deny", "nope", "expected ADDRESS or ADDRESS/BITS")
