"""Response bodies relayed with splice(2) (`--splice-min`, default 64 KiB): byte-exact at
every size around the threshold and the pipe's size, and a pipe that still holds bytes when
an exchange ends early (backend or client gone mid-body) never hands them to the next one."""

import hashlib

import pytest

from backends import large, large_body, route, slow_body
from client import Client, Deadline

PIPE = 256 * 1024

SIZES = [1, 65535, 65536, 65537, 100_000, PIPE - 1, PIPE, PIPE + 1, 3 * PIPE + 12345,
         (1 << 20) + 777]


def sized_backend(make_backend):
    """GET /N answers N bytes of `large_body`."""
    return make_backend(route({f"/{n}": large(n, chunk=50_000) for n in SIZES}))


@pytest.mark.time_limit(60)
@pytest.mark.parametrize("splice_min", ["64KiB", "1", "0"])
def test_sizes_around_the_threshold_on_one_connection(sluice, make_backend, splice_min):
    """Every size, spliced or copied, arrives whole on one keep-alive connection, and the
    connection stays usable after each."""
    b = sized_backend(make_backend)
    sluice.start([b], args=["--splice-min", splice_min])
    with Client(sluice.port, timeout=20) as c:
        for n in SIZES + SIZES[::-1]:
            r = c.request("GET", f"/{n}", timeout=20)
            assert r.status == 200
            assert len(r.body) == n, (n, len(r.body))
            assert r.body == large_body(n), f"{n} bytes differ"
    assert b.connections <= 2  # The upstream connection was reused throughout.


def test_http10_client_gets_the_spliced_body(sluice, make_backend):
    b = sized_backend(make_backend)
    sluice.start([b], args=["--splice-min", "1"])
    n = 3 * PIPE + 12345
    with Client(sluice.port, timeout=10) as c:
        r = c.request("GET", f"/{n}", version="HTTP/1.0", timeout=10)
        assert r.status == 200 and r.body == large_body(n)


@pytest.mark.time_limit(60)
def test_backend_gone_mid_body_then_the_next_response_is_clean(sluice, make_backend):
    """The backend closes 300,000 bytes into a 1 MiB body: the client gets exactly those
    bytes and then a close. Then other clients get their own bodies, whole and exact (the
    pipe that held the first one's bytes was not reused dirty)."""
    n = 1 << 20
    cut = slow_body(body=large_body(n), chunk=100_000, delay=0.01, stall_after=300_000, stall=0.05)
    b = make_backend(route({"/cut": cut}, default=large(PIPE + 999, chunk=40_000)))
    sluice.start([b], args=["--splice-min", "1"])
    with Client(sluice.port, timeout=10) as c:
        c.send_request("GET", "/cut")
        head = c.bsock.read_until(b"\r\n\r\n", Deadline(5))
        assert head.startswith(b"HTTP/1.1 200"), head
        body = c.bsock.read_to_close(Deadline(10))
        assert len(body) == 300_000
        assert body == large_body(n)[:300_000]
    for _ in range(4):
        with Client(sluice.port, timeout=10) as c:
            r = c.request("GET", "/whole", timeout=10)
            assert r.body == large_body(PIPE + 999)


@pytest.mark.time_limit(60)
def test_client_gone_mid_body_then_the_next_response_is_clean(sluice, make_backend):
    """Clients that read part of a large spliced body and go away leave nothing behind: the
    next clients get their own bytes, whole and exact."""
    b = sized_backend(make_backend)
    sluice.start([b], args=["--splice-min", "1"])
    n = (1 << 20) + 777
    for _ in range(6):
        c = Client(sluice.port, timeout=10, rcvbuf=32768)
        c.send_request("GET", f"/{n}")
        c.bsock.read_until(b"\r\n\r\n", Deadline(5))
        c.read_some(2.0)
        c.close()
    for _ in range(3):
        with Client(sluice.port, timeout=20) as c:
            r = c.request("GET", f"/{n}", timeout=20)
            assert hashlib.sha256(r.body).digest() == hashlib.sha256(large_body(n)).digest()


def test_head_of_a_large_body_is_only_a_head(sluice, make_backend):
    b = sized_backend(make_backend)
    sluice.start([b], args=["--splice-min", "1"])
    n = 3 * PIPE + 12345
    with Client(sluice.port, timeout=10) as c:
        r = c.request("HEAD", f"/{n}", timeout=10)
        assert r.status == 200 and r.header("content-length") == str(n) and r.body == b""
        r = c.request("GET", f"/{n}", timeout=10)
        assert r.body == large_body(n)
