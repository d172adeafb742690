"""Membership changes (upstream/Members.zig): a reload that changes only a pool's member list
keeps the pool and changes its membership in place. Members that stay keep their health and
their idle backend connections; members that leave drain (what is in flight finishes, their
connections close); members that join start healthy. Under steady traffic no request fails,
and traffic follows the new list as soon as the reload is applied.
"""

import re
import threading
import time

import pytest

from backends import echo, health_endpoint, route, slow_head, traffic
from client import Client, Echoed, request, wait_until
from conftest import free_port, write_zon
from test_admin import scrape
from test_reload import SteadyLoad, addr, reload
from test_routing import config

CHANGED_RE = re.compile(r"pool app: (\d+) members joined, (\d+) left")


def pool_cfg(port, members, admin=None, **pool):
    top = {"listen": addr(port)}
    if admin is not None:
        top["admin"] = {"listen": addr(admin)}
    return config({"app": {"backends": [m.address for m in members], **pool}},
                  [{"pool": "app"}], **top)


def test_a_changed_list_keeps_the_pool_and_the_connections_of_members_that_stay(
        sluice, make_backend, tmp_path):
    """[a, b] becomes [a, c]: the reload says 1 member joined and 1 left and rebuilds no pool;
    after it, requests go to a and c only, and a keep-alive client's requests to `a` reuse
    the connection sluice had open to it before the reload (a's connection count does not
    move), while b gets nothing more."""
    a, b, c = (make_backend(echo(), name=n) for n in ("a", "b", "c"))
    port = free_port()
    path = write_zon(tmp_path / "m.zon", pool_cfg(port, [a, b]))
    sluice.start_config(path)
    with Client(port) as client:
        names = [Echoed(client.request("GET", f"/before/{i}")).backend for i in range(6)]
        assert set(names) == {"a", "b"}, names
        a_connections, b_requests = a.connections, len(b.requests)
        mark = sluice.mark()
        line = reload(sluice, path, pool_cfg(port, [a, c]), 2)
        assert "1 with new members, 0 rebuilt" in line.string, line.string
        joined, left = sluice.wait_for_line(CHANGED_RE, 5.0, start=mark).groups()
        assert (joined, left) == ("1", "1")
        names = [Echoed(client.request("GET", f"/after/{i}")).backend for i in range(8)]
    assert set(names) == {"a", "c"}, names
    assert len(b.requests) == b_requests, "a member that left got requests"
    assert a.connections == a_connections, \
        f"{a.connections - a_connections} new connections to a member that stayed"


def test_a_member_that_leaves_finishes_its_request_in_flight(sluice, make_backend, tmp_path):
    """A request in flight to `slow` when a reload removes it still gets its 200; the next
    requests go to the member that stays; once it is done, no connection to it is left open
    (/status shows only the remaining member, with none in flight)."""
    slow = make_backend(route({"/slow": slow_head(1.5)}), name="slow")
    other = make_backend(echo(), name="other")
    port, admin = free_port(), free_port()
    path = write_zon(tmp_path / "m.zon", pool_cfg(port, [slow], admin=admin))
    sluice.start_config(path)
    answers = []
    client = threading.Thread(target=lambda: answers.append(
        request(port, "GET", "/slow", timeout=10.0)))
    client.start()
    try:
        assert wait_until(lambda: sluice.stats()["upstream_requests_in_flight"] == 1, 3.0)
        reload(sluice, path, pool_cfg(port, [other], admin=admin), 2)
        names = [Echoed(request(port, "GET", f"/next/{i}")).backend for i in range(4)]
        assert set(names) == {"other"}, names
    finally:
        client.join(timeout=10.0)
    assert answers and answers[0].status == 200, answers
    assert wait_until(lambda: sluice.stats()["upstream_requests_in_flight"] == 0, 3.0)
    members = {labels["backend"] for _, labels, _ in scrape(admin)["sluice_backend_up"]["samples"]}
    assert members == {other.address}, members
    assert wait_until(lambda: slow.closed_connections >= 1, 3.0), "its connection stayed open"


@pytest.mark.time_limit(30)
def test_members_that_stay_keep_their_health_and_new_ones_start_up(
        sluice, make_backend, tmp_path):
    """Active checks mark `bad` down. A reload that adds `new` to [good, bad] keeps bad down
    (no request reaches it, it is not announced down a second time) and sends traffic to
    `new` at once (members join healthy, before their first probe)."""
    hg, hb = health_endpoint(), health_endpoint(status=503)
    good, bad = make_backend(hg, name="good"), make_backend(hb, name="bad")
    new = make_backend(health_endpoint(), name="new")
    port = free_port()
    health = {"path": "/health", "interval": "300ms", "timeout": "250ms", "fall": 2, "rise": 2}
    path = write_zon(tmp_path / "m.zon", pool_cfg(port, [good, bad], health=health))
    sluice.start_config(path)
    down_re = rf"backend {re.escape(bad.address)} is down: active check failed"
    sluice.wait_for_line(down_re, timeout=10.0)
    before = len(traffic(bad))
    reload(sluice, path, pool_cfg(port, [good, bad, new], health=health), 2)
    names = [Echoed(request(port, "GET", f"/after/{i}")).backend for i in range(12)]
    assert set(names) == {"good", "new"}, names
    assert len(traffic(bad)) == before
    probes = hb.probes
    assert wait_until(lambda: hb.probes >= probes + 2, 5.0), "active checks stopped"
    assert len(sluice.log_lines(down_re)) == 1, sluice.stderr_text()


class Load(SteadyLoad):
    """test_reload's steady clients (keep-alive, every 10th request on a new connection),
    with each answer's time and backend recorded."""

    def __init__(self, port):
        super().__init__(port)
        self.answers = []  # (monotonic time, backend name)
        self.start()

    def _record(self, tid, i, target, r):
        super()._record(tid, i, target, r)  # A wrong answer is a failure there.
        try:
            name = Echoed(r).backend
        except (AssertionError, ValueError):
            return
        with self.lock:
            self.answers.append((time.monotonic(), name))

    def since(self, t0):
        with self.lock:
            return [name for t, name in self.answers if t >= t0]


@pytest.mark.time_limit(60)
def test_members_added_removed_and_replaced_under_traffic_fail_no_request(
        sluice, make_backend, tmp_path):
    """4 clients send requests back to back while 12 reloads add, remove and replace members
    (applied in place every time: the pool has 8 slots and 14 members join in all, so slots
    are reused as drained members free them):
    no request fails, no request reaches a member after the reload that removed it has been
    applied and 100 ms more, the first request reaches an added member well within a second,
    and no heap allocation is made after start-up."""
    backends = [make_backend(echo(), name=f"m{i}") for i in range(5)]
    port, admin = free_port(), free_port()
    lists = [[0, 1], [1, 2], [2, 3, 4], [4], [4, 0], [0, 1, 2, 3],
             [3], [3, 1], [1, 4], [4, 0, 2], [2], [2, 3]]
    path = write_zon(tmp_path / "m.zon", pool_cfg(port, [backends[i] for i in lists[0]],
                                                  admin=admin))
    sluice.start_config(path)
    load = Load(port)
    follow_ms = []
    try:
        assert wait_until(lambda: load.count() >= 20, 10.0), "no traffic got through"
        for generation, members in enumerate(lists[1:], start=2):
            previous = set(lists[generation - 2])
            time.sleep(0.15)
            line = reload(sluice, path,
                          pool_cfg(port, [backends[i] for i in members], admin=admin), generation)
            applied = time.monotonic()
            # In place every time: drained slots are freed and reused (8 slots, 14 joins).
            assert "1 with new members, 0 rebuilt" in line.string, line.string
            added = {f"m{i}" for i in set(members) - previous}
            if added:
                assert wait_until(lambda: added & set(load.since(applied)), 5.0), \
                    f"generation {generation}: no request reached {added}"
                with load.lock:
                    first = min(t for t, name in load.answers if t >= applied and name in added)
                follow_ms.append((first - applied) * 1000)
            time.sleep(0.1)
            later = time.monotonic()
            assert wait_until(lambda: len(load.since(later)) >= 8, 5.0), "traffic stalled"
            stray = set(load.since(later)) - {f"m{i}" for i in members}
            assert not stray, f"generation {generation}: {stray} served after they left"
    finally:
        load.stop()
    print(f"{load.done} requests, {len(load.failures)} failed; first request to an added "
          f"member {max(follow_ms):.1f} ms after the reload at most "
          f"(median {sorted(follow_ms)[len(follow_ms) // 2]:.1f} ms)")
    assert load.failures == [], f"{len(load.failures)} failures: {load.failures[:5]}"
    assert max(follow_ms) < 1000, follow_ms
    assert not sluice.log_lines(re.compile("reload failed")), sluice.stderr_text()
    assert wait_until(lambda: (lambda st: st["connections_active"] == 0
                               and st["upstream_requests_in_flight"] == 0)(sluice.stats()),
                      5.0, interval=0.05), sluice.stats()
    assert sluice.stop(timeout=10.0) == 0
    assert sluice.exit_allocations() == 0
