"""Active health checks on pools whose members speak HTTP/2 (`--backend-protocol h2c`, or h2
over TLS): the probe is HTTP/2 too (preface, SETTINGS, one HEADERS), judged by `:status`. An
HTTP/1.1 request line would be a broken preface to such a member, and every probe would fail.

The members are small HTTP/2 servers written on hyper-h2 (h2member.py), which record each
request's pseudo-fields and answer every path with the status set for it. Every test runs
once per I/O backend.
"""

import re
import ssl
import time

import pytest

from client import request
from conftest import ZonEnum, write_zon
from h2member import H2Member

ARGS = ["--backend-protocol", "h2c", "--health-path", "/healthz", "--health-interval", "100ms",
        "--health-timeout", "500ms", "--health-rise", "1", "--health-fall", "1"]


@pytest.fixture
def members():
    made = []

    def make(name, tls=None):
        member = H2Member(name, tls)
        made.append(member)
        return member
    yield make
    for member in made:
        member.close()


def wait(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


@pytest.mark.time_limit(30)
def test_h2c_members_are_probed_in_http2_and_judged_by_their_status(sluice, members):
    """Both members are probed as HTTP/2 (GET, scheme http, the address as :authority, the
    probe's user-agent); one whose health path answers 503 goes down with that status as the
    reason and gets no request, then comes back when it answers 200 again."""
    a, b = members("A"), members("B")
    sluice.start([a.address, b.address], args=ARGS)
    assert wait(lambda: a.probes() and b.probes(), 5), (a.requests, b.requests)
    probe = b.probes()[0]
    assert probe[":method"] == "GET" and probe[":scheme"] == "http", probe
    assert probe[":authority"] == b.address and probe["user-agent"] == "sluice-health-check", probe
    assert not sluice.log_lines(r"is down"), sluice.stderr_text()

    b.statuses["/healthz"] = 503
    sluice.wait_for_line(rf"^sluice: warn: backend {re.escape(b.address)} is down: active check failed "
                         r"\(status 503\)$", timeout=5)
    before = len([r for r in b.requests if r[":path"] != "/healthz"])
    for i in range(10):
        r = request(sluice.port, "GET", f"/app/{i}")
        assert r.status == 200 and r.body == b"A", (r.status, r.body)
    assert len([r for r in b.requests if r[":path"] != "/healthz"]) == before

    b.statuses["/healthz"] = 200
    sluice.wait_for_line(rf"^sluice: (info: )?backend {re.escape(b.address)} is up", timeout=5)
    assert wait(lambda: any(request(sluice.port, "GET", "/again").body == b"B" for _ in range(10)), 5)


@pytest.mark.time_limit(30)
def test_an_http11_server_in_an_h2c_pool_fails_its_probe_as_malformed(sluice, members, make_backend):
    """A member that speaks HTTP/1.1 answers the preface with an HTTP/1.1 error: the probe
    reads it as frames, finds none, and the member is down as `malformed response`."""
    a = members("A")
    old = make_backend(name="old")
    sluice.start([a.address, old], args=ARGS)
    sluice.wait_for_line(rf"^sluice: warn: backend {re.escape(old.address)} is down: active check failed "
                         r"\((malformed response|closed before a status line)\)$", timeout=5)
    assert not sluice.log_lines(rf"backend {re.escape(a.address)} is down"), sluice.stderr_text()


@pytest.mark.time_limit(30)
def test_h2_members_over_tls_are_probed_over_tls_in_http2(sluice, members, tmp_path):
    """`.protocol = .h2`: the probe shakes hands with ALPN h2 and says scheme https."""
    from test_backend_tls import make_pki
    pki = make_pki(tmp_path / "pki")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*pki["server"])
    ctx.set_alpn_protocols(["h2"])
    a, b = members("A", tls=ctx), members("B", tls=ctx)
    pool = {
        "backends": [a.address, b.address], "protocol": ZonEnum("h2"), "tls": {"ca": pki["ca"]},
        "health": {"path": "/healthz", "interval": "100ms", "timeout": "500ms", "rise": 1, "fall": 1},
    }
    path = write_zon(tmp_path / "h2.zon", {"listen": "127.0.0.1:0", "pools": {"app": pool}})
    b.statuses["/healthz"] = 500
    sluice.start_config(path)
    sluice.wait_for_line(rf"^sluice: warn: backend {re.escape(b.address)} is down: active check failed "
                         r"\(status 500\)$", timeout=5)
    probe = a.probes()[0]
    assert probe[":scheme"] == "https" and probe[":method"] == "GET", probe
    for i in range(6):
        r = request(sluice.port, "GET", f"/tls/{i}")
        assert r.status == 200 and r.body == b"A", (r.status, r.body)
