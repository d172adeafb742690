"""Pools of many members: a pool takes up to 1,024 backends (2,048 in all pools together),
sized when it is built, with no fixed 64 on the request path.

Many members without many servers: one backend socket bound to 0.0.0.0 answers on every
loopback address, and members are 127.0.X.Y:PORT, each a distinct address (and so a distinct
member, health, id and connection pool to sluice). The backend answers with the local
address the connection reached, so the test sees which member served each request.
"""

import socket
import threading
from collections import Counter

import pytest

from client import Client
from conftest import assert_quiescent, write_zon
from test_admin import ADMIN_RE, admin
from test_config_docs import check

MEMBERS = 1024


class AnyLoopback:
    """A keep-alive HTTP/1.1 server on 0.0.0.0:PORT that answers `GET` with the address the
    client connected to ("127.0.3.7"), one thread per connection."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("0.0.0.0", 0))
        self.sock.listen(512)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        local = conn.getsockname()[0].encode()
        buffered = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buffered:
                    try:
                        data = conn.recv(65536)
                    except OSError:
                        return
                    if not data:
                        return
                    buffered += data
                _, buffered = buffered.split(b"\r\n\r\n", 1)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s"
                             % (len(local), local))

    def stop(self):
        self.stopped = True
        self.sock.close()


def member(i: int, port: int) -> str:
    """The i-th member's address: 127.0.1.1 up, skipping .0 and .255 in the last byte."""
    return f"127.0.{1 + i // 254}.{1 + i % 254}:{port}"


@pytest.fixture
def any_loopback():
    server = AnyLoopback()
    yield server
    server.stop()


def pool_config(port: int, count: int, **pool) -> dict:
    return {
        "listen": "127.0.0.1:0",
        "pools": {"big": {"backends": [member(i, port) for i in range(count)], **pool}},
    }


@pytest.mark.time_limit(60)
def test_round_robin_over_1024_members(sluice, any_loopback, tmp_path):
    """1,024 members, round robin, one worker: 2,048 requests on keep-alive connections
    reach every member exactly twice; /status lists all 1,024, each available; no heap
    allocation on the way."""
    path = write_zon(tmp_path / "big.zon", pool_config(any_loopback.port, MEMBERS))
    sluice.start_config(path, args=["--admin", "127.0.0.1:0"], workers=1)
    admin_port = int(sluice.wait_for_line(ADMIN_RE).group("port"))
    served = Counter()
    with Client(sluice.port) as c:
        for i in range(2 * MEMBERS):
            r = c.request("GET", f"/r/{i}")
            assert r.status == 200, r
            served[r.body.decode()] += 1
    expected = {member(i, any_loopback.port).rsplit(":", 1)[0]: 2 for i in range(MEMBERS)}
    assert served == expected
    status = admin(admin_port, "/status").json()
    backends = status["pools"][0]["backends"]
    assert len(backends) == MEMBERS
    assert all(b["available"] for b in backends)
    after = assert_quiescent(sluice)
    assert after["heap_allocations_after_startup"] == 0, after


@pytest.mark.time_limit(60)
@pytest.mark.parametrize("strategy", ["hash", "sticky", "least_conn", "random", "weighted"])
def test_every_strategy_over_1024_members(sluice, any_loopback, tmp_path, strategy):
    """Each other strategy picks among 1,024 members: hash keeps a key on one member and
    spreads keys over hundreds; the rest spread 2,000 requests over hundreds of members."""
    cfg = pool_config(any_loopback.port, MEMBERS, strategy=strategy)
    if strategy == "hash":
        cfg["pools"]["big"]["hash"] = {"on": "header", "name": "X-User"}
    path = write_zon(tmp_path / "big.zon", cfg)
    sluice.start_config(path, workers=1)
    served = Counter()
    with Client(sluice.port) as c:
        for i in range(2000):
            r = c.request("GET", f"/r/{i}", headers=[("X-User", f"user-{i % 500}")])
            assert r.status == 200, r
            served[r.body.decode()] += 1
            if strategy == "hash" and i >= 500:
                again = c.request("GET", "/again", headers=[("X-User", f"user-{i % 500}")])
                assert again.body == r.body
    assert len(served) > 300, (strategy, len(served))
    after = assert_quiescent(sluice)
    assert after["heap_allocations_after_startup"] == 0, after


def test_check_takes_1024_members_and_names_the_1025th(sluice_bin, tmp_path):
    """`sluice check` accepts a pool of 1,024 members and points at the 1,025th when there
    is one more; pools of 1,024 each past 2,048 in all are refused with the reason."""
    ok = write_zon(tmp_path / "ok.zon", pool_config(9, MEMBERS))
    code, out, err = check(sluice_bin, ok)
    assert code == 0, (out, err)

    over = write_zon(tmp_path / "over.zon", pool_config(9, MEMBERS + 1))
    code, out, err = check(sluice_bin, over)
    assert code == 1
    text = out + err
    assert "more than 1024 backends" in text, text
    lines = over.read_text().splitlines()
    # The position named is the 1,025th backend's line.
    line_no = next(i for i, line in enumerate(lines, 1) if member(MEMBERS, 9) in line)
    assert f"over.zon:{line_no}:" in text, text

    three = {
        "listen": "127.0.0.1:0",
        "pools": {name: {"backends": [member(i, 9 + k) for i in range(MEMBERS)]}
                  for k, name in enumerate(("a", "b", "c"))},
        "routes": [{"path_prefix": f"/{name}/", "pool": name} for name in ("a", "b", "c")],
    }
    code, out, err = check(sluice_bin, write_zon(tmp_path / "three.zon", three))
    assert code == 1
    assert "more than 2048 backends in all pools together" in out + err, out + err
