"""Backends on Unix sockets (`--backend unix:/PATH`, `"unix:/PATH"` in files): the same pools,
keep-alive, splice, health checks and failover as TCP backends, on both I/O backends; `sluice
check` looks at each path; mistakes in the address say what a path may be."""

import os
import re
import shutil
import socket
import tempfile

import pytest

from backends import Backend, echo, large, large_body, route
from client import Client, Echoed, request, wait_until
from conftest import free_port, write_zon
from test_cli import run
from test_reload import reload
from test_routing import config


@pytest.fixture
def sockdir():
    """A short directory for sockets: a Unix socket's path is at most 107 bytes, which
    pytest's own temporary paths can outgrow."""
    path = tempfile.mkdtemp(prefix="sx", dir="/tmp")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def unix_backend(sockdir):
    made = []

    def factory(behaviour=None, name="app", **kw):
        b = Backend(behaviour or echo(), name=name, unix_path=os.path.join(sockdir, f"{name}.sock"), **kw)
        made.append(b)
        return b

    yield factory
    for b in made:
        b.stop(timeout=1.0)


def test_requests_reach_a_unix_socket_on_one_kept_alive_connection(sluice, unix_backend):
    """Twenty requests on one client connection reach the backend on one Unix socket
    connection, with X-Forwarded-For of the TCP client; /status and the stats line name the
    backend `unix:PATH`; the heap is untouched."""
    b = unix_backend()
    sluice.start([b.address], args=["--admin", f"127.0.0.1:{(admin := free_port())}"])
    with Client(sluice.port) as c:
        for i in range(20):
            seen = Echoed(c.request("POST", f"/item/{i}", body=b"x" * i))
            assert seen.target == f"/item/{i}" and seen.body_len == i
    assert b.connections == 1, b
    assert Echoed(request(sluice.port, "GET", "/")).header_all("x-forwarded-for") == ["127.0.0.1"]
    from test_admin import status
    [backend] = status(admin)["pools"][0]["backends"]
    assert backend["address"] == b.address and backend["available"]
    st = sluice.stats()
    assert st["heap_allocations_after_startup"] == 0, st


@pytest.mark.time_limit(60)
def test_large_bodies_both_ways_spliced_and_copied(sluice, unix_backend):
    """A 3 MiB upload and a 3 MiB download pass whole over a Unix socket, with splice (the
    default threshold) and without, on one client connection."""
    n = 3 << 20
    b = unix_backend(route({"/big": large(n, chunk=100_000)}))
    sluice.start([b.address], args=["--splice-min", "1"])
    with Client(sluice.port, timeout=20) as c:
        for _ in range(2):
            r = c.request("GET", "/big", timeout=20)
            assert r.status == 200 and r.body == large_body(n)
            up = Echoed(c.request("PUT", "/up", body=large_body(n), timeout=20))
            assert up.body_len == n


def test_health_checks_follow_the_socket(sluice, unix_backend, sockdir):
    """Active checks probe over the socket (Host: localhost, since a path is not a host); when
    the application stops, the backend goes down saying that nothing listens there; when a new
    one listens on the same path, it comes back and serves."""
    b = unix_backend()
    path = b.unix_path
    sluice.start([b.address], args=["--health-path", "/healthz", "--health-interval", "100ms",
                                    "--health-fall", "1", "--health-rise", "1"])
    assert b.wait_for(lambda: any(r.path == "/healthz" for r in b.requests), 5.0)
    probe = next(r for r in b.requests if r.path == "/healthz")
    assert probe.header("host") == "localhost"
    b.stop(timeout=1.0)
    assert sluice.wait_for_line(re.compile(r"is down: active check failed"), 5.0)
    assert request(sluice.port, "GET", "/").status in (502, 503)
    if os.path.exists(path):  # Python's socket server leaves its file behind.
        os.unlink(path)
    again = Backend(echo(), name="again", unix_path=path)
    try:
        assert sluice.wait_for_line(re.compile(r"is up"), 5.0)
        assert Echoed(request(sluice.port, "GET", "/")).backend == "again"
    finally:
        again.stop(timeout=1.0)


@pytest.mark.parametrize("kind", ["missing", "not_listening"])
def test_health_checks_say_why_a_socket_fails(sluice, sockdir, kind):
    """A path with no file, and a socket file nothing listens on, each go down with their own
    reason."""
    path = os.path.join(sockdir, "app.sock")
    if kind == "not_listening":  # Bound, never listened: connect(2) is refused.
        bound = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        bound.bind(path)
    sluice.start([f"unix:{path}"], args=["--health-path", "/healthz", "--health-interval", "100ms",
                                         "--health-fall", "1"])
    down = sluice.wait_for_line(re.compile(r"is down: active check failed \((.+)\)"), 5.0)
    assert down.group(1) == {"missing": "no such socket file",
                             "not_listening": "connection refused (no process listens on the socket)"}[kind]
    assert request(sluice.port, "GET", "/").status in (502, 503)
    if kind == "not_listening":
        bound.close()


def test_a_missing_socket_fails_over_to_the_next_member(sluice, backend, sockdir):
    """A pool of a Unix socket that does not exist and a TCP backend: every request is
    answered by the TCP one (the failed connect is retried there), and the log names the path."""
    missing = f"unix:{sockdir}/nobody.sock"
    sluice.start([missing, backend.address])
    for i in range(6):
        assert Echoed(request(sluice.port, "GET", f"/{i}")).backend == backend.name
    st = sluice.stats()
    assert st["heap_allocations_after_startup"] == 0, st


def test_a_reload_moves_the_pool_to_another_socket(sluice, unix_backend, tmp_path):
    """A file names one socket; a reload names another: new requests go to the new one."""
    one, two = unix_backend(name="one"), unix_backend(name="two")
    path = write_zon(tmp_path / "unix.zon", config({"app": [one.address]}))
    sluice.start_config(path)
    assert Echoed(request(sluice.port, "GET", "/")).backend == "one"
    assert reload(sluice, path, config({"app": [two.address]}), 2)
    assert wait_until(lambda: Echoed(request(sluice.port, "GET", "/")).backend == "two", 5.0)


def test_send_proxy_v2_to_a_unix_socket(sluice, sockdir):
    """`--send-proxy v2` to a Unix socket backend: the header carries the TCP client and the
    listener it came in on, as it does for a TCP backend; health probes send LOCAL."""
    from test_proxy_protocol import ProxyReceiver
    path = os.path.join(sockdir, "pp.sock")
    receiver = ProxyReceiver(unix_path=path)
    try:
        sluice.start([f"unix:{path}"], args=["--send-proxy", "v2", "--health-path", "/healthz",
                                             "--health-interval", "100ms"])
        src, dst = request(sluice.port, "GET", "/").body.decode().split()
        assert src.startswith("127.0.0.1:") and dst == f"127.0.0.1:{sluice.port}"
        assert wait_until(lambda: ("local", "") in receiver.connections, 5.0), receiver.connections
        assert not [c for c in receiver.connections if c[0] == "refused"], receiver.connections
    finally:
        receiver.close()


# --- mistakes and `sluice check` ---------------------------------------------------------


@pytest.mark.parametrize("text", ["unix:relative.sock", "unix:/run/my app.sock", "unix:/",
                                  "unix:/" + "a" * 107])
def test_a_bad_path_on_the_command_line_says_what_a_path_may_be(sluice_bin, text):
    code, _, err = run(sluice_bin, "--listen", "127.0.0.1:0", "--backend", text)
    assert code == 2, err
    assert f'invalid address "{text}": expected unix:/PATH, an absolute path of at most 107 bytes' in err, err


def test_a_bad_path_in_a_file_names_line_and_column(sluice_bin, tmp_path):
    path = tmp_path / "bad.zon"
    path.write_text('.{\n    .listen = "127.0.0.1:0",\n    .pools = .{ .app = .{ .backends = .{ "unix:run/app.sock" } } },\n}\n')
    code, _, err = run(sluice_bin, "check", str(path))
    assert code == 1, err
    assert f"{path}:3:" in err and "expected unix:/PATH" in err, err


def test_a_listener_cannot_be_a_unix_socket(sluice_bin):
    code, _, err = run(sluice_bin, "--listen", "unix:/tmp/x.sock", "--backend", "127.0.0.1:1")
    assert code == 2, err
    assert "Unix sockets are for backends only" in err, err


def test_check_looks_at_each_path(sluice_bin, tmp_path, sockdir):
    """A socket passes quietly; a path that does not exist yet is a warning (the application
    may not run where the check does); a path that is a regular file is an error."""
    sock = os.path.join(sockdir, "live.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(sock)
    regular = os.path.join(sockdir, "plain.txt")
    open(regular, "w").close()
    missing = os.path.join(sockdir, "later.sock")

    def check(backends):
        cfg = tmp_path / "c.zon"
        write_zon(cfg, config({"app": backends}))
        return run(sluice_bin, "check", str(cfg))

    code, out, err = check([f"unix:{sock}"])
    assert code == 0 and "ok" in out and err == "", (out, err)
    code, out, err = check([f"unix:{missing}"])
    assert code == 0 and "ok" in out, (out, err)
    assert f"warning: pool app: {missing}: no such socket file (yet)" in err, err
    code, out, err = check([f"unix:{sock}", f"unix:{regular}"])
    assert code == 1, (out, err)
    assert f"error: pool app: {regular}: not a socket (a regular file)" in err, err
    s.close()
