"""Rate limits (issue 24): token buckets per client address, header value or route, at the
top level (`--rate-limit`) and per route; a refused request gets 429 with Retry-After,
counted in /metrics; each worker takes its share; mistakes name their line and column or
their flag; a reload changes a limit; no heap allocation per request. Every test runs once
per I/O backend.
"""

from client import Client
from conftest import write_zon
from h2client import H2Client
from test_access_lists import assert_mistakes, get_from
from test_admin import ADMIN_RE, scrape, value
from test_proxy_protocol import v1
from test_reload import reload


def statuses(port, n, path="/", headers=()):
    with Client(port) as c:
        return [c.request("GET", path, headers=list(headers)).status for _ in range(n)]


def test_a_burst_then_429_with_retry_after_per_client(sluice, backend):
    """`--rate-limit 1/m,burst=3`: three requests pass, the fourth gets 429 with a Retry-After
    (capped at 60 s); another client address has its own bucket; counted."""
    sluice.start([backend], args=["--rate-limit", "1/m,burst=3", "--admin", "127.0.0.1:0"])
    admin = int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))
    with Client(sluice.port) as c:
        assert [c.request("GET", "/").status for _ in range(3)] == [200, 200, 200]
        r = c.request("GET", "/")
        assert r.status == 429, r
        assert r.header("retry-after") == "60"
        assert r.body == b"429 Too Many Requests: over the rate limit, retry later\n"
    assert get_from(sluice.port, "127.0.0.2").status == 200
    families = scrape(admin)
    assert value(families, "sluice_requests_rate_limited_total") == 1
    assert len(backend.requests) == 4


def test_keys_header_route_and_the_proxy_protocol_address(sluice, backend, tmp_path):
    """A route keyed on a header: each value its own bucket, no header falls back to the
    address; a route keyed on the route: one bucket for all; the PROXY protocol's address is
    the client's key."""
    cfg = {"listen": "127.0.0.1:0", "proxy_protocol": True, "admin": {"listen": "127.0.0.1:0"},
           "pools": {"app": {"backends": [backend.address]}},
           "routes": [{"path_prefix": "/api/", "pool": "app", "rate_limit": "1/m,burst=2,key=header:X-Api-Key"},
                      {"path_prefix": "/all/", "pool": "app", "rate_limit": "1/m,burst=1,key=route"},
                      {"pool": "app", "rate_limit": "1/m,burst=1"}]}
    path = write_zon(tmp_path / "rl.zon", cfg)
    sluice.start_config(path)
    port = sluice.port
    admin = int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))

    def get(source, target, headers=()):
        with Client(port) as c:
            c.sock.sendall(v1(source))
            return c.request("GET", target, headers=list(headers)).status

    assert [get("192.0.2.1", "/api/x", [("X-Api-Key", "a")]) for _ in range(3)] == [200, 200, 429]
    assert get("192.0.2.1", "/api/x", [("X-Api-Key", "b")]) == 200
    assert get("192.0.2.2", "/api/x") == 200  # no key: the address's bucket
    assert get("192.0.2.3", "/all/") == 200
    assert get("192.0.2.4", "/all/") == 429  # the route's one bucket
    assert get("192.0.2.5", "/") == 200
    assert get("192.0.2.5", "/") == 429
    assert get("2001:db8::1", "/") == 200
    assert get("2001:db8::2", "/") == 429  # the same /64
    families = scrape(admin)
    for route, limited in (("0", 1), ("1", 1), ("2", 2)):
        assert value(families, "sluice_route_rate_limited_total", route=route) == limited
    assert value(families, "sluice_requests_rate_limited_total") == 4
    cfg["routes"][2]["rate_limit"] = "1/m,burst=5"
    reload(sluice, path, cfg, 2)
    assert get("192.0.2.5", "/") == 200  # a changed rule starts its buckets full


def test_each_worker_takes_its_share(sluice, backend):
    """Two workers: `1/m,burst=4` is a burst of 2 per worker, so one connection (one worker)
    gets 2 through."""
    sluice.start([backend], args=["--rate-limit", "1/m,burst=4"], workers=2)
    assert statuses(sluice.port, 3) == [200, 200, 429]


def test_mistakes_name_their_line_column_or_flag(sluice_bin, tmp_path):
    assert_mistakes(sluice_bin, tmp_path, '.rate_limit = "10/h"',
                    r".*per second \(/s\) or per minute \(/m\)",
                    "--rate-limit", "10/s,burst=0", "burst is a whole number")


def test_no_heap_allocations_with_limits_lists_and_refusals(sluice, backend):
    """400 requests through an allow list and a rate limit, 200 on one connection, then 200
    refused with 429 (each on a new connection: sluice closes after an error): 0 heap
    allocations after start-up."""
    sluice.start([backend], args=["--rate-limit", "1/m,burst=200", "--allow", "127.0.0.0/8"])
    assert statuses(sluice.port, 200) == [200] * 200
    assert [statuses(sluice.port, 1)[0] for _ in range(200)] == [429] * 200
    sluice.stop()
    assert sluice.exit_allocations() == 0, sluice.stderr_text()


def test_http2_streams_get_429_with_retry_after(sluice, backend):
    """On an h2c connection the limit answers each stream: 429 with Retry-After for the one
    over it, 200 for the others on the same connection."""
    sluice.start([backend], args=["--http2", "on", "--rate-limit", "1/m,burst=2"])
    client = H2Client.plain(sluice.port)
    try:
        first = client.wait(client.request("GET", "/a"))
        assert [r.status for r in first.values()] == [200]
        responses = client.wait(*[client.request("GET", f"/{i}") for i in range(2)])
        got = sorted(r.status for r in responses.values())
        assert got == [200, 429], got
        limited = next(r for r in responses.values() if r.status == 429)
        assert limited.header("retry-after") == "60"
    finally:
        client.close()
