"""systemd's `Type=notify` (issue 19 §3): with `$NOTIFY_SOCKET` set, sluice sends datagrams to
that Unix socket itself, as sd_notify(3) describes: `READY=1` with `MAINPID=` once it serves,
`RELOADING=1` with `MONOTONIC_USEC=` and then `READY=1` around every reload (with a `STATUS=`
line saying whether it was applied, and why not), `STOPPING=1` when it drains. The tests bind a
real datagram socket, by path and in the abstract namespace (`@name`), and read what arrives.
"""

import os
import re
import signal
import socket
import time

import pytest

from client import Echoed, request
from conftest import write_zon
from test_routing import config, said, says


class NotifySocket:
    """A Unix datagram socket standing in for systemd's notification socket."""

    def __init__(self, address):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(address)
        self.sock.settimeout(5.0)

    def next(self):
        """The next notification, as {KEY: VALUE}."""
        try:
            data = self.sock.recv(4096).decode()
        except socket.timeout:
            pytest.fail("no notification within 5 s")
        assert data.endswith("\n"), data
        return dict(line.split("=", 1) for line in data.splitlines())

    def nothing(self):
        self.sock.settimeout(0.2)
        try:
            return self.sock.recv(4096) is None
        except socket.timeout:
            return True
        finally:
            self.sock.settimeout(5.0)

    def close(self):
        self.sock.close()


@pytest.mark.parametrize("kind", ["path", "abstract"])
def test_sd_notify_ready_reloading_and_stopping(sluice, backend, tmp_path, monkeypatch, kind):
    if kind == "path":
        address = str(tmp_path / "notify.sock")
        env = address
    else:
        name = f"sluice-test-{os.getpid()}-{time.monotonic_ns()}"
        address, env = "\0" + name, "@" + name
    notify = NotifySocket(address)
    try:
        monkeypatch.setenv("NOTIFY_SOCKET", env)
        path = write_zon(tmp_path / "s.zon", config({"app": [backend]}))
        sluice.start_config(path)

        ready = notify.next()
        assert ready["READY"] == "1" and ready["MAINPID"] == str(sluice.pid), ready
        assert ready["STATUS"] == "serving generation 1", ready
        assert Echoed(request(sluice.port, "GET", "/a")).target == "/a"

        # An applied reload.
        write_zon(path, config({"app": [backend]}, [says("new", path_prefix="/new"),
                                                    {"pool": "app"}]))
        before_us = time.monotonic_ns() // 1000
        sluice.signal(signal.SIGHUP)
        reloading = notify.next()
        assert reloading["RELOADING"] == "1", reloading
        # CLOCK_MONOTONIC in microseconds, as systemd 253+ compares it with its own.
        assert before_us <= int(reloading["MONOTONIC_USEC"]) <= time.monotonic_ns() // 1000
        done = notify.next()
        assert done["READY"] == "1", done
        assert done["STATUS"] == "reloaded: serving generation 2", done
        assert said(request(sluice.port, "GET", "/new")) == "new"

        # A refused one: READY=1 all the same (sluice serves on), with why in STATUS.
        path.write_text('.{ .pools = .{ .app = .{ .backends = .{ "127.0.0.1:330001" } } } }\n')
        sluice.signal(signal.SIGHUP)
        assert notify.next()["RELOADING"] == "1"
        refused = notify.next()
        assert refused["READY"] == "1", refused
        assert refused["STATUS"].startswith("reload refused, still serving generation 2: "
                                            f"{path}:1:"), refused
        # A port typo is named as the port (it used to be reported as a bad host).
        assert "port 330001 is out of range (0 to 65535)" in refused["STATUS"], refused
        assert said(request(sluice.port, "GET", "/new")) == "new"

        sluice.signal(signal.SIGTERM)
        stopping = notify.next()
        assert stopping["STOPPING"] == "1" and "SIGTERM" in stopping["STATUS"], stopping
        assert sluice.wait(5.0) == 0
        assert notify.nothing()
    finally:
        notify.close()


def test_without_notify_socket_nothing_is_sent_and_a_bad_one_is_named(sluice, backend,
                                                                      monkeypatch):
    """A NOTIFY_SOCKET sluice cannot use (systemd's vsock form) is named in a warning, and
    sluice serves all the same."""
    monkeypatch.setenv("NOTIFY_SOCKET", "vsock:2:999")
    sluice.start([backend])
    assert request(sluice.port, "GET", "/x").status == 200
    assert any(re.search(r"warn: NOTIFY_SOCKET=vsock:2:999: ", ln) for ln in sluice.lines), \
        sluice.stderr_text()
