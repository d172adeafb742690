"""Many concurrent clients, and the --max-connections limit."""

import selectors
import socket
import threading
import time

import pytest

from backends import echo
from client import BufferedSocket, Client, Deadline, Echoed, build_request, read_response


@pytest.mark.time_limit(90)
def test_200_concurrent_keepalive_clients(sluice, make_backend):
    """200 concurrent client connections, 20 keep-alive requests each, --workers 2: all
    4,000 responses are 200 with the right body."""
    backends = [make_backend(echo()), make_backend(echo())]
    sluice.start(backends, workers=2)
    n_clients, n_requests = 200, 20
    errors, ok = [], [0]
    lock = threading.Lock()
    barrier = threading.Barrier(n_clients, timeout=30)

    def one(cid):
        try:
            with Client(sluice.port, timeout=20) as c:
                barrier.wait()
                for j in range(n_requests):
                    target = f"/c/{cid}/{j}"
                    body = f"body {cid} {j}".encode()
                    e = Echoed(c.request("POST", target, body=body, timeout=20))
                    assert (e.target, e.body) == (target, body), (e.target, e.body)
                    with lock:
                        ok[0] += 1
        except Exception as e:  # noqa: BLE001 - collected and asserted below
            with lock:
                errors.append(f"client {cid}: {e!r}")

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n_clients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.1, 75 - (time.monotonic() - t0)))
    assert not any(t.is_alive() for t in threads), "some clients never finished"
    assert not errors, f"{len(errors)} clients failed, e.g. {errors[:3]}"
    assert ok[0] == n_clients * n_requests
    assert sum(len(b.requests) for b in backends) == n_clients * n_requests
    print(f"{ok[0]} requests over {n_clients} connections in {time.monotonic() - t0:.2f}s")


def _open_nonblocking(port, n, timeout=5.0):
    """Start n connects at once; return the sockets once all are connected."""
    sel = selectors.DefaultSelector()
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        sel.register(s, selectors.EVENT_WRITE)
        socks.append(s)
    pending = set(socks)
    deadline = Deadline(timeout)
    while pending:
        for key, _ in sel.select(deadline.check("connecting")):
            s = key.fileobj
            err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            assert err == 0, f"connect failed: errno {err}"
            sel.unregister(s)
            pending.discard(s)
    sel.close()
    for s in socks:
        s.setblocking(True)
        s.settimeout(5.0)
    return socks


@pytest.mark.time_limit(40)
def test_max_connections_pauses_accept(sluice, backend):
    """--max-connections 10 (one worker): 10 held keep-alive connections are served;
    20 more connect (the kernel completes their handshakes) but get no response while the
    10 are open, because accept is paused; none is lost: once the first 10 close, all 20
    are served."""
    sluice.start([backend], workers=1, args=["--max-connections", "10"])
    first = [Client(sluice.port) for _ in range(10)]
    waiting = []
    try:
        for i, c in enumerate(first):
            assert Echoed(c.request("GET", f"/first/{i}")).target == f"/first/{i}"
        waiting = _open_nonblocking(sluice.port, 20)
        buffered = [BufferedSocket(s) for s in waiting]
        for i, s in enumerate(waiting):
            s.sendall(build_request("GET", f"/waiting/{i}",
                                    headers=[("Connection", "close")]))
        time.sleep(0.5)
        sel = selectors.DefaultSelector()
        for s in waiting:
            sel.register(s, selectors.EVENT_READ)
        early = sel.select(0)
        sel.close()
        assert not early, \
            f"{len(early)} connections over --max-connections were answered while 10 were open"
        assert len(backend.requests) == 10
        # The first ten still work while the others wait.
        assert Echoed(first[0].request("GET", "/still")).target == "/still"
        for c in first:
            c.close()
        statuses = {}
        deadline = Deadline(10.0)
        for i, bs in enumerate(buffered):
            r = read_response(bs, timeout=max(0.1, deadline.remaining()))
            statuses[i] = r.status
        assert all(st == 200 for st in statuses.values()), statuses
        assert len(backend.requests) == 10 + 1 + 20
    finally:
        for c in first:
            c.close()
        for s in waiting:
            s.close()
