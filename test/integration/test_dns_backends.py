"""Backends by name (runtime/Dns.zig): `--backend NAME:PORT` resolved by sluice's own resolver
against a DNS server written for the tests (dnsserver.py), whose answers change while traffic
flows. Members follow the answers within their TTL (held between --dns-ttl-min and
--dns-ttl-max), a failing server keeps the last good set, a name that never resolved makes its
pool answer 503 saying so, and a reload can bring a name in.
"""

import re
import time

import pytest

from backends import echo
from client import Echoed, request, wait_until
from conftest import free_port, write_zon
from dnsserver import DnsServer
from test_reload import addr, reload
from test_routing import config

TTL_ARGS = ("--dns-ttl-min", "1s", "--dns-ttl-max", "1s")


@pytest.fixture
def dns():
    server = DnsServer()
    yield server
    server.stop()


def backend_on(make_backend, host, port, name):
    return make_backend(echo(), host=host, port=port, name=name)


def pair_on_one_port(make_backend):
    """Backends `a` on 127.0.0.1 and `b` on 127.0.0.2 with the same port (a name's addresses
    share its port), trying again when another socket holds that port on 127.0.0.2."""
    for _ in range(20):
        a = make_backend(echo(), name="a")
        try:
            return a, backend_on(make_backend, "127.0.0.2", a.port, "b")
        except OSError:
            a.stop(timeout=1.0)
    raise AssertionError("no port free on both loopback addresses")


def names_seen(port, count, path="/"):
    return {Echoed(request(port, "GET", f"{path}{i}")).backend for i in range(count)}


def test_a_name_resolves_at_start_up_and_members_follow_its_answers(sluice, make_backend, dns):
    """app.test:P resolves to 127.0.0.1 before the first accept (the first request gets a 200);
    when the answer adds 127.0.0.2, requests reach it within the TTL; when it then drops
    127.0.0.1, requests go to 127.0.0.2 alone; the log says what changed."""
    a, b = pair_on_one_port(make_backend)
    dns.set("app.test", a=["127.0.0.1"], ttl=1)
    sluice.start([f"app.test:{a.port}"], args=("--resolver", dns.address, *TTL_ARGS))
    assert sluice.wait_for_line(re.compile(r"dns app\.test:\d+: 1 addresses \(TTL 1 s\)"), 2.0)
    assert names_seen(sluice.port, 4) == {"a"}

    dns.set("app.test", a=["127.0.0.1", "127.0.0.2"], ttl=1)
    assert sluice.wait_for_line(re.compile(r"pool default: 1 members joined, 0 left \(draining\), from DNS"), 5.0)
    assert wait_until(lambda: names_seen(sluice.port, 6) == {"a", "b"}, 3.0), "127.0.0.2 never got traffic"

    dns.set("app.test", a=["127.0.0.2"], ttl=1)
    assert sluice.wait_for_line(re.compile(r"pool default: 0 members joined, 1 left \(draining\), from DNS"), 5.0)
    before = len(a.requests)
    assert names_seen(sluice.port, 6) == {"b"}
    assert len(a.requests) == before


def test_a_failing_server_keeps_the_last_good_set(sluice, make_backend, dns):
    """SERVFAIL, then no reply at all, for several TTLs: the pool keeps its member and every
    request succeeds; the state change is logged once, and the recovery too."""
    a = make_backend(echo(), name="a")
    dns.set("app.test", a=["127.0.0.1"], ttl=1)
    sluice.start([f"app.test:{a.port}"], args=("--resolver", dns.address, *TTL_ARGS))
    mark = sluice.mark()
    dns.mode = "servfail"
    assert sluice.wait_for_line(re.compile(r"dns app\.test:\d+: no answer from any server; keeping its last addresses"), 15.0, start=mark)
    for i in range(10):
        assert request(sluice.port, "GET", f"/during/{i}").status == 200
    dns.mode = "answer"
    assert sluice.wait_for_line(re.compile(r"dns app\.test:\d+: resolves again: 1 addresses"), 15.0, start=mark)
    failing = [ln for ln in sluice.lines[mark:] if "no answer from any server" in ln]
    assert len(failing) == 1, failing


def test_a_name_that_never_resolved_answers_503_until_it_does(sluice, make_backend, dns):
    """NXDOMAIN at start-up: sluice starts anyway (within the bounded wait), the pool has no
    members and answers 503 with the reason; once the name exists, the pool fills and requests
    succeed."""
    a = make_backend(echo(), name="a")
    started = time.monotonic()
    sluice.start([f"late.test:{a.port}"], args=("--resolver", dns.address, *TTL_ARGS))
    assert time.monotonic() - started < 4.0
    assert sluice.wait_for_line(re.compile(r"dns late\.test:\d+: no such name or no address; its pools have no members from it"), 3.0)
    resp = request(sluice.port, "GET", "/early")
    assert resp.status == 503
    assert b"backend names have not resolved" in resp.body
    dns.set("late.test", a=["127.0.0.1"], ttl=1)
    assert wait_until(lambda: request(sluice.port, "GET", "/later").status == 200, 10.0)
    assert Echoed(request(sluice.port, "GET", "/x")).backend == "a"


def test_start_up_does_not_wait_long_for_a_silent_server(sluice, make_backend, dns):
    """A server that never replies: start-up goes on after its bounded wait (2 s), warns, and
    answers 503 meanwhile."""
    a = make_backend(echo(), name="a")
    dns.mode = "drop"
    started = time.monotonic()
    sluice.start([f"app.test:{a.port}"], args=("--resolver", dns.address))
    assert time.monotonic() - started < 5.0
    assert any("no answer within 2000 ms of start-up" in ln for ln in sluice.lines)
    assert request(sluice.port, "GET", "/").status == 503


def test_names_and_addresses_mix_in_one_pool(sluice, make_backend, dns):
    """A pool of an address and a name: both get traffic; the name's weight applies to each of
    its addresses."""
    a = make_backend(echo(), name="a")
    b = make_backend(echo(), name="b")
    dns.set("b.test", a=["127.0.0.1"], ttl=30)
    sluice.start([a.address, f"b.test:{b.port},weight=3"], args=("--resolver", dns.address, "--strategy", "weighted"))
    seen = [Echoed(request(sluice.port, "GET", f"/{i}")).backend for i in range(40)]
    assert set(seen) == {"a", "b"}
    assert seen.count("b") > seen.count("a")


def test_a_reload_brings_a_name_in_and_keeps_serving(sluice, make_backend, dns, tmp_path):
    """A pool of addresses is reloaded into a pool of a name (the first name: the resolver starts
    then): requests keep succeeding, the old member serves until the name's first answer, and
    then the name's member takes over; reloaded back, the name is asked no more."""
    a = make_backend(echo(), name="a")
    b = backend_on(make_backend, "127.0.0.2", 0, "b")
    dns.set("b.test", a=["127.0.0.2"], ttl=1)
    port = free_port()

    def cfg(backends):
        return config({"app": {"backends": backends}}, [{"pool": "app"}], listen=addr(port),
                      resolvers=[dns.address], dns={"ttl_min": "1s", "ttl_max": "1s"})

    path = write_zon(tmp_path / "dns.zon", cfg([a.address]))
    sluice.start_config(path)
    assert names_seen(sluice.port, 3) == {"a"}
    mark = sluice.mark()
    line = reload(sluice, path, cfg([f"b.test:{b.port}"]), 2)
    # The pool is kept; its members change when the name first answers, not before.
    assert "1 kept, 0 with new members, 0 rebuilt" in line.string, line.string
    for i in range(5):
        assert request(sluice.port, "GET", f"/r/{i}").status == 200
    assert sluice.wait_for_line(re.compile(r"pool app: 1 members joined, 1 left \(draining\), from DNS"), 5.0, start=mark)
    assert wait_until(lambda: names_seen(sluice.port, 4) == {"b"}, 5.0)
    # Back to the address: the name is asked no more, and the pool serves from `a` again.
    reload(sluice, path, cfg([a.address]), 3)
    assert names_seen(sluice.port, 3) == {"a"}
    asked = dns.count("b.test")
    time.sleep(2.5)  # More than two TTLs of the name.
    assert dns.count("b.test") == asked, "a name no pool gives is still asked"


@pytest.mark.parametrize("args,message", [
    (["--backend", "bad_host!:80"], "invalid address \"bad_host!:80\": expected HOST:PORT where HOST is an IP address, localhost, or a DNS name"),
    (["--backend", "10.0.0.300:80"], "a DNS name"),
    (["--backend", "app.test:80", "--resolver", "not-an-ip"], "invalid resolver \"not-an-ip\": expected IP or IP:PORT"),
    (["--backend", "app.test:80", "--resolver", "1.1.1.1", "--resolver", "1.1.1.2", "--resolver", "1.1.1.3", "--resolver", "1.1.1.4"], "more than 3 resolvers"),
])
def test_flags_name_what_is_wrong(sluice_bin, args, message):
    from test_reload import run
    code, out = run(sluice_bin, *args)
    assert code != 0
    assert message in out, out


def test_check_accepts_names_in_files(sluice_bin, tmp_path):
    from test_reload import run
    path = write_zon(tmp_path / "ok.zon", config(
        {"app": {"backends": ["app.internal:8080", {"address": "api.svc.cluster.local.:80", "weight": 2}]}},
        [{"pool": "app"}], resolvers=["10.0.0.2", "10.0.0.3:5353"]))
    code, out = run(sluice_bin, "check", str(path))
    assert code == 0, out


def test_status_and_metrics_show_each_name(sluice, make_backend, dns):
    """/status lists each name with its state, addresses, TTL and counts; /metrics has the
    sluice_dns_* families labelled NAME:PORT; a failure is counted and keeps the addresses."""
    from test_admin import scrape, status

    def value(families, metric, name):
        found = [v for n, labels, v in families[metric]["samples"] if n == metric and labels.get("name") == name]
        assert len(found) == 1, (metric, name, found)
        return found[0]
    a = make_backend(echo(), name="a")
    admin_port = free_port()
    dns.set("app.test", a=["127.0.0.1"], aaaa=["::1"], ttl=1)
    sluice.start([f"app.test:{a.port}"], args=("--resolver", dns.address, "--admin", f"127.0.0.1:{admin_port}", *TTL_ARGS))
    from test_admin import ADMIN_RE
    assert sluice.wait_for_line(ADMIN_RE, 5.0)
    [entry] = status(admin_port)["dns"]
    assert entry["name"] == "app.test" and entry["port"] == a.port
    assert entry["state"] == "resolved"
    assert sorted(entry["addresses"]) == sorted([f"127.0.0.1:{a.port}", f"[::1]:{a.port}"])
    assert entry["ttl_seconds"] == 1 and entry["failures"] == 0 and entry["last_failure"] == ""
    assert 0 <= entry["last_resolved_seconds_ago"] < 5
    label = f"app.test:{a.port}"
    families = scrape(admin_port)
    assert value(families, "sluice_dns_addresses", name=label) == 2
    assert value(families, "sluice_dns_resolutions_total", name=label) >= 1
    dns.mode = "nxdomain"
    assert wait_until(lambda: status(admin_port)["dns"][0]["failures"] >= 1, 5.0)
    entry = status(admin_port)["dns"][0]
    assert entry["state"] == "not_found" and entry["last_failure"] == "not_found"
    assert len(entry["addresses"]) == 2, "a failure must keep the last good set"
    assert value(scrape(admin_port), "sluice_dns_failures_total", name=label) >= 1
    assert request(sluice.port, "GET", "/").status == 200


def test_an_srv_name_gives_ports_and_weights(sluice, make_backend, dns):
    """`srv+NAME`: the lowest priority's targets are the members, each on its SRV port with its
    SRV weight (3 to 1 here, under `weighted`); a higher priority's target gets nothing; a new
    target in the answer joins within the TTL."""
    a = make_backend(echo(), name="a")
    b = make_backend(echo(), name="b")
    c = make_backend(echo(), name="c")
    dns.set("a.test", a=["127.0.0.1"], ttl=30)
    dns.set("b.test", a=["127.0.0.1"], ttl=30)
    dns.set("c.test", a=["127.0.0.1"], ttl=30)
    dns.set("_http._tcp.app.test", srv=[(10, 1, a.port, "a.test"), (10, 3, b.port, "b.test"),
                                        (20, 1, c.port, "c.test")], ttl=1)
    sluice.start(["srv+_http._tcp.app.test"], args=("--resolver", dns.address, "--strategy", "weighted", *TTL_ARGS))
    assert sluice.wait_for_line(re.compile(r"dns srv\+_http\._tcp\.app\.test: 2 addresses \(TTL 1 s\)"), 2.0)
    seen = [Echoed(request(sluice.port, "GET", f"/{i}")).backend for i in range(40)]
    assert seen.count("a") == 10 and seen.count("b") == 30, seen
    dns.set("_http._tcp.app.test", srv=[(10, 1, a.port, "a.test"), (10, 3, b.port, "b.test"),
                                        (10, 1, c.port, "c.test")], ttl=1)
    assert wait_until(lambda: "c" in names_seen(sluice.port, 10), 5.0)


def test_an_srv_name_written_without_a_port(sluice, make_backend, dns):
    """`_http._tcp.NAME` with no port is an SRV name too; a target that has no address is left
    out, the others serve."""
    a = make_backend(echo(), name="a")
    dns.set("a.test", a=["127.0.0.1"], ttl=30)
    dns.set("_http._tcp.app.test", srv=[(0, 0, a.port, "a.test"), (0, 0, 9, "gone.test")], ttl=30)
    sluice.start(["_http._tcp.app.test"], args=("--resolver", dns.address))
    assert names_seen(sluice.port, 5) == {"a"}


def same_port_backends(make_backend, count):
    """`count` echo backends m0..m{count-1} on 127.0.0.1, 127.0.0.2, ... all on one port."""
    for _ in range(20):
        first = make_backend(echo(), name="m0")
        made = [first]
        try:
            for i in range(1, count):
                made.append(backend_on(make_backend, f"127.0.0.{i + 1}", first.port, f"m{i}"))
            return made
        except OSError:
            for b in made:
                b.stop(timeout=1.0)
    raise AssertionError("no port free on every loopback address")


@pytest.mark.time_limit(90)
def test_members_follow_dns_changes_under_traffic_and_no_request_fails(sluice, make_backend, dns):
    """4 clients send requests back to back while the name's answer adds, removes and replaces
    addresses 8 times (TTL 1 s, held at 1 s): no request fails, each added address gets its
    first request within one TTL plus 1 s of the change, no request reaches a removed
    address once the change is applied, and no heap allocation is made after start-up."""
    from test_membership_changes import Load
    backends = same_port_backends(make_backend, 5)
    ip = [f"127.0.0.{i + 1}" for i in range(5)]
    sets = [[0, 1], [1, 2], [2, 3, 4], [4], [4, 0], [0, 1, 2, 3], [3], [3, 1], [1, 4]]
    dns.set("app.test", a=[ip[i] for i in sets[0]], ttl=1)
    sluice.start([f"app.test:{backends[0].port}"], args=("--resolver", dns.address, *TTL_ARGS))
    load = Load(sluice.port)
    follow_ms = []
    try:
        assert wait_until(lambda: load.count() >= 20, 10.0), "no traffic got through"
        for step, members in enumerate(sets[1:], start=1):
            previous = set(sets[step - 1])
            mark = sluice.mark()
            changed = time.monotonic()
            dns.set("app.test", a=[ip[i] for i in members], ttl=1)
            assert sluice.wait_for_line(re.compile(r"pool default: \d+ members joined, \d+ left \(draining\), from DNS"), 5.0, start=mark)
            applied = time.monotonic()
            added = {f"m{i}" for i in set(members) - previous}
            if added:
                assert wait_until(lambda: added & set(load.since(changed)), 5.0), f"step {step}: no request reached {added}"
                with load.lock:
                    first = min(t for t, name in load.answers if t >= changed and name in added)
                follow_ms.append((first - changed) * 1000)
            time.sleep(0.1)
            later = time.monotonic()
            assert applied < later
            assert wait_until(lambda: len(load.since(later)) >= 8, 5.0), "traffic stalled"
            stray = set(load.since(later)) - {f"m{i}" for i in members}
            assert not stray, f"step {step}: {stray} served after they left"
    finally:
        load.stop()
    print(f"{load.done} requests, {len(load.failures)} failed; first request to an added "
          f"address {max(follow_ms):.0f} ms after the DNS change at most "
          f"(median {sorted(follow_ms)[len(follow_ms) // 2]:.0f} ms; TTL 1 s)")
    assert load.failures == [], f"{len(load.failures)} failures: {load.failures[:5]}"
    assert max(follow_ms) < 2000, follow_ms
    assert sluice.stop(timeout=10.0) == 0
    assert sluice.exit_allocations() == 0
