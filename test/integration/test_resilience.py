"""Backends that die, come back, stall, answer 5xx or break off responses: retries, passive
ejection (outlier detection), active health checks, the ejection cap and the retry budget.

Intervals are short (100 ms checks, 300 ms cool-downs) so every scenario takes a second or
two; bounds on time are generous (several intervals of margin), because a 2-core machine
running both the backends' threads and sluice can be late by a few hundred milliseconds.
Every scenario ends by checking the stats line: no client connection left, no request in
flight upstream, and no heap allocation since start-up.
"""

import re
import threading
import time

import pytest

from backends import (RefusingPort, echo, fixed, health_endpoint, kill_backend, raw_response, reset, route,
                      slow_head, stall, switchable, traffic, truncated_body)
from conftest import assert_quiescent  # noqa: E402
from client import Client, ConnectionClosed, Deadline, Echoed, request

NO_BACKEND = b"no healthy backend available"


# ---------------------------------------------------------------------------------------
# Helpers


def log_lines(sluice, pattern):
    """sluice's stderr lines matching the regex `pattern`."""
    rx = re.compile(pattern)
    with sluice._cond:
        return [ln for ln in sluice.lines if rx.search(ln)]


def ejected_re(addr):
    return rf"^sluice: warn: backend {re.escape(addr)} ejected for \d+ ms: \d+ consecutive failures"


class SteadyClient:
    """Sequential GETs on a keep-alive connection (reconnecting after a close), one every
    `interval` seconds, in a background thread, `count` of them or until .stop().
    `.results` holds (index, status or exception text, backend name or None, seconds) per
    request."""

    def __init__(self, port, count=100000, interval=0.01, target="/steady", method="GET"):
        self.port, self.count, self.interval = port, count, interval
        self.target, self.method = target, method
        self.results = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def stop(self, timeout=10.0):
        self.stopping.set()
        return self.join(timeout)

    def start(self):
        self.thread.start()
        return self

    def done(self):
        with self.lock:
            return len(self.results)

    def _run(self):
        c = None
        for i in range(self.count):
            if self.stopping.is_set():
                break
            t0 = time.monotonic()
            status, name = None, None
            try:
                if c is None:
                    c = Client(self.port, timeout=5)
                r = c.request(self.method, f"{self.target}/{i}")
                status = r.status
                if r.status == 200:
                    name = Echoed(r).backend
                if "close" in r.connection_tokens():
                    c.close()
                    c = None
            except Exception as e:  # noqa: BLE001 - recorded, asserted by the test
                status = repr(e)
                if c is not None:
                    c.close()
                c = None
            with self.lock:
                self.results.append((i, status, name, time.monotonic() - t0))
            self.stopping.wait(max(0.0, self.interval - (time.monotonic() - t0)))
        if c is not None:
            c.close()

    def join(self, timeout):
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the steady client did not finish"
        return self.results

    def failures(self):
        return [r for r in self.results if r[1] != 200]


def _wait(pred, timeout):
    """Poll `pred` every 10 ms until true (True) or `timeout` passes (False)."""
    deadline = Deadline(timeout)
    while not pred():
        if deadline.expired():
            return False
        time.sleep(0.01)
    return True


def timed(port, method="GET", target="/", body=None, timeout=5.0):
    t0 = time.monotonic()
    r = request(port, method, target, body=body, timeout=timeout)
    return r, time.monotonic() - t0


# ---------------------------------------------------------------------------------------
# A backend dies and comes back


@pytest.mark.time_limit(30)
def test_backend_killed_and_restarted_no_client_failure(sluice, make_backend):
    """A steady client (300 sequential GETs, one per 10 ms) against 3 backends while one
    is killed (listener closed, open connections reset) and, once its ejection is logged,
    restarted on the same port: not one request fails (the failures are retried on the
    others). The ejection is logged exactly once; after the 300 ms cool-down a trial request
    reaches the restarted backend (`trial request succeeded`) and traffic returns to it."""
    a, b = make_backend(echo(), name="A"), make_backend(echo(), name="B")
    victim = make_backend(echo(), name="C")
    sluice.start([a, b, victim], args=["--eject-time", "300ms", "--eject-time-max", "1200ms"])
    client = SteadyClient(sluice.port, 300).start()
    assert _wait(lambda: client.done() >= 60, 5.0), "the steady client is too slow"
    assert len(traffic(victim)) >= 15, "the victim got no share before it was killed"
    kill_backend(victim)
    killed_at = client.done()
    sluice.wait_for_line(ejected_re(victim.address), timeout=3.0)
    revived = make_backend(echo(), port=victim.port, name="C")
    revived_at = client.done()
    sluice.wait_for_line(
        rf"^sluice: backend {re.escape(victim.address)}: trial request succeeded, back in "
        r"rotation$", timeout=4.0)
    results = client.join(15)
    assert client.failures() == [], client.failures()[:5]
    assert len(results) == 300
    assert len(log_lines(sluice, ejected_re(victim.address))) == 1, sluice.stderr_text()
    # Traffic came back: round robin gives the revived backend its third of what follows.
    back = [r for r in results[revived_at:] if r[2] == "C"]
    assert len(back) >= 20, f"only {len(back)} requests reached the revived backend"
    assert revived.errors == [] and a.errors == [] and b.errors == []
    st = assert_quiescent(sluice)
    assert st["ejections"] >= 1 and st["backends_available"] == 3, st
    print(f"killed after {killed_at} requests, revived after {revived_at}; "
          f"{len(back)} served by the revived backend")


def _steer_to_other_than(port, name):
    """With round robin over 2 backends and --workers 1, send GETs until one is answered by
    `name`'s peer: the next request then goes to `name`."""
    for i in range(3):
        if Echoed(request(port, "GET", f"/steer/{i}")).backend != name:
            return
    raise AssertionError(f"round robin never left {name}")


@pytest.mark.time_limit(20)
def test_backend_killed_mid_request(sluice, make_backend):
    """A backend killed (connections reset) while a request waits on it: a GET is retried
    on the other backend and answered 200; a POST (after the backend was restarted on the
    same port) gets 502 and is not retried."""
    slow = route({"/slow": slow_head(10.0)})
    victim = make_backend(slow, name="victim")
    good = make_backend(echo(), name="good")
    sluice.start([victim, good], args=["--eject-after", "0"])

    _steer_to_other_than(sluice.port, "victim")
    with Client(sluice.port, timeout=5) as c:
        c.send_request("GET", "/slow/get")
        assert victim.wait_for(lambda: "/slow/get" in victim.targets(), 3.0)
        kill_backend(victim)
        r = c.read_response()
        assert Echoed(r).backend == "good" and Echoed(r).target == "/slow/get", r

    victim = make_backend(slow, port=victim.port, name="victim")
    _steer_to_other_than(sluice.port, "victim")
    with Client(sluice.port, timeout=5) as c:
        c.send_request("POST", "/slow/post", body=b"once only")
        assert victim.wait_for(lambda: "/slow/post" in victim.targets(), 3.0)
        kill_backend(victim)
        r = c.read_response()
        assert r.status == 502, r
        assert "close" in r.connection_tokens()
    assert "/slow/post" not in good.targets(), "a POST was retried"
    assert_quiescent(sluice)


@pytest.mark.time_limit(30)
def test_all_backends_down_fast_503_then_recovery(sluice, make_backend):
    """Both backends refuse connections: after --eject-after 2 failures each, both are
    ejected (--eject-max-percent 100 allows it) and a request gets a fast 503 (well under
    100 ms; 150 ms allowed for a busy machine) saying `no healthy backend available`, with
    Connection: close. When one backend comes back on its port, requests succeed again
    within the cool-down (500 ms, not doubled: --eject-time-max 500ms) plus a margin (2 s
    in all). The 503 is asked for right after both ejections, well inside the cool-down."""
    p1, p2 = RefusingPort(), RefusingPort()
    try:
        sluice.start([p1.address, p2.address],
                     args=["--eject-after", "2", "--eject-max-percent", "100",
                           "--eject-time", "500ms", "--eject-time-max", "500ms"])
        early = [request(sluice.port, "GET", f"/down/{i}").status for i in range(4)]
        assert set(early) <= {502, 503}, early
        sluice.wait_for_line(ejected_re(p1.address), timeout=2.0)
        sluice.wait_for_line(ejected_re(p2.address), timeout=2.0)
        r, elapsed = timed(sluice.port, target="/none")
        assert r.status == 503 and NO_BACKEND in r.body, r
        assert "close" in r.connection_tokens(), r.headers
        assert elapsed < 0.15, f"503 took {elapsed * 1000:.0f} ms"
        assert sluice.stats()["backends_available"] == 0

        p1.release()
        back = make_backend(echo(), port=p1.port, name="back")
        t0 = time.monotonic()
        statuses = []
        while True:
            r = request(sluice.port, "GET", "/poll")
            statuses.append(r.status)
            if r.status == 200:
                break
            assert r.status in (502, 503), r
            assert time.monotonic() - t0 < 2.0, f"still failing after 2 s: {statuses}"
            time.sleep(0.03)
        assert Echoed(r).backend == "back"
        for i in range(5):
            assert Echoed(request(sluice.port, "GET", f"/ok/{i}")).backend == "back"
        assert back.errors == []
        assert_quiescent(sluice)
    finally:
        p1.release()
        p2.release()


@pytest.mark.time_limit(20)
def test_ejection_cool_down_doubles_up_to_max(sluice, make_backend):
    """A backend that stays dead: ejected for --eject-time (100 ms) after --eject-after 1
    failure; each failed half-open trial ejects it again for twice as long, up to
    --eject-time-max (400 ms): 100, then 200, 400, 400 ms. A steady client never sees a
    failure (every failed try, trial or not, is a connect failure and is retried), and the
    stats line counts every ejection."""
    dead = RefusingPort()
    try:
        good = make_backend(echo(), name="good")
        sluice.start([good, dead.address],
                     args=["--eject-after", "1", "--eject-time", "100ms",
                           "--eject-time-max", "400ms"])
        client = SteadyClient(sluice.port, interval=0.01).start()
        again_re = rf"^sluice: warn: backend {re.escape(dead.address)}: trial request failed " \
                   r"\(connect\), ejected again for (\d+) ms$"
        first = sluice.wait_for_line(ejected_re(dead.address), timeout=3.0)
        assert "ejected for 100 ms: 1 consecutive failures (last: connect)" in first.string
        # 100 + 200 + 400 ms of cool-down before the third failed trial: 3 s is plenty.
        _wait(lambda: len(log_lines(sluice, again_re)) >= 3, 3.0)
        client.stop()
        got = [int(re.match(again_re, ln).group(1)) for ln in log_lines(sluice, again_re)]
        assert got[:3] == [200, 400, 400], sluice.stderr_text()
        assert client.failures() == [], client.failures()[:5]
        assert len(log_lines(sluice, ejected_re(dead.address))) == 1
        st = assert_quiescent(sluice)
        assert st["ejections"] == 1 + len(log_lines(sluice, again_re)), st
    finally:
        dead.release()


# ---------------------------------------------------------------------------------------
# Stalls and timeouts


@pytest.mark.time_limit(30)
def test_stalled_backend_gets_retried_but_post_504(sluice, make_backend):
    """One backend accepts and never answers; --upstream-response-timeout 300ms,
    --eject-after 0 (so it stays in the pool), and timeouts opted into --retry-on. Every
    idempotent GET still gets a 200 from the good backend (the timed-out try is retried),
    none slower than the timeout plus 700 ms. A POST that goes to the stalled backend is not
    retried: 504 after about the timeout, and the good backend never sees it."""
    good = make_backend(echo(), name="good")
    stuck = make_backend(stall(), name="stuck")
    sluice.start([good, stuck], args=["--upstream-response-timeout", "300ms",
                                      "--eject-after", "0",
                                      "--retry-on", "connect,reset,timeout"])
    slow = 0
    for i in range(6):
        r, elapsed = timed(sluice.port, target=f"/get/{i}")
        assert Echoed(r).backend == "good", r
        assert elapsed < 1.0, f"GET {i} took {elapsed:.2f}s"
        slow += elapsed >= 0.25
    assert slow >= 2, "the stalled backend was never tried"
    assert len(stuck.requests) == slow

    statuses = []
    for i in range(3):
        r, elapsed = timed(sluice.port, "POST", f"/post/{i}", body=b"payload")
        statuses.append(r.status)
        if r.status == 504:
            assert 0.25 <= elapsed < 1.0, f"504 after {elapsed:.2f}s"
            assert "close" in r.connection_tokens()
            assert f"/post/{i}" in stuck.targets()
            assert f"/post/{i}" not in good.targets(), "a POST was retried"
            break
        assert Echoed(r).backend == "good"
    assert 504 in statuses, statuses
    assert_quiescent(sluice)


@pytest.mark.time_limit(20)
def test_stalled_backend_ejected_by_timeouts(sluice, make_backend):
    """Response timeouts count for ejection (default --eject-on): a backend that never
    answers is ejected after --eject-after 2 timed-out tries (`last: timeout`), after which
    GETs are fast again. Every GET gets a 200 (the timed-out tries are retried, as
    --retry-on asks)."""
    good = make_backend(echo(), name="good")
    stuck = make_backend(stall(), name="stuck")
    sluice.start([good, stuck], args=["--upstream-response-timeout", "300ms",
                                      "--eject-after", "2", "--eject-time", "30s",
                                      "--retry-on", "connect,reset,timeout"])
    times = []
    for i in range(12):
        r, elapsed = timed(sluice.port, target=f"/get/{i}")
        assert Echoed(r).backend == "good", r
        times.append(elapsed)
    # The line is written when the second timeout ejects the backend; on a loaded machine the
    # thread reading sluice's stderr may not have it yet.
    sluice.wait_for_line(ejected_re(stuck.address), timeout=5)
    lines = log_lines(sluice, ejected_re(stuck.address))
    assert len(lines) == 1 and lines[0].endswith("(last: timeout)"), sluice.stderr_text()
    assert len(stuck.requests) == 2, stuck.targets()
    assert sum(t >= 0.25 for t in times) == 2, times
    assert all(t < 0.25 for t in times[4:]), times
    assert_quiescent(sluice)


def test_response_timeouts_are_not_retried_by_default(sluice, make_backend):
    """A request that timed out may still be running on its backend (a long poll): by default
    it is answered 504 and never sent to a second backend."""
    good = make_backend(echo(), name="good")
    stuck = make_backend(stall(), name="stuck")
    sluice.start([stuck, good], args=["--upstream-response-timeout", "300ms",
                                      "--eject-after", "0"])
    saw_504 = False
    for i in range(4):
        r, elapsed = timed(sluice.port, target=f"/poll/{i}")
        if r.status == 504:
            saw_504 = True
            assert f"/poll/{i}" in stuck.targets() and f"/poll/{i}" not in good.targets()
        else:
            assert Echoed(r).backend == "good"
    assert saw_504
    assert len(stuck.requests) + len(good.requests) == 4


def test_a_malformed_response_is_not_retried(sluice, make_sluice, make_backend):
    """The probe sent a GET to a backend answering garbage: sluice sent it three times (a
    stale-connection retry, then another backend). A response byte means the backend took the
    request: the client gets one 502 and the request went out once."""
    malformed = raw_response(b"HTTP/1.1 200 OK\r\nBad Field\r\n\r\n", close=False)
    bad = make_backend(route({"/m/": malformed}), name="bad")
    other = make_backend(echo(), name="other")
    sluice.start([bad], args=["--eject-after", "0"])
    # A pooled connection to `bad` first, so the malformed answer comes on a reused one (the
    # case that was taken for a stale keep-alive connection).
    assert request(sluice.port, "GET", "/ok").status == 200
    r = request(sluice.port, "GET", "/m/1")
    assert r.status == 502, r
    assert bad.targets().count("/m/1") == 1, bad.targets()
    # With a second backend, the 502 still stands: nothing goes to the other one.
    second = make_sluice()
    second.start([bad, other], args=["--eject-after", "0"])
    statuses = [request(second.port, "GET", f"/m/{i}").status for i in range(10, 14)]
    assert statuses.count(502) == 2, statuses
    # Each request went to one backend, once.
    sent = bad.targets()[2:] + other.targets()
    assert sorted(sent) == [f"/m/{i}" for i in range(10, 14)], (bad.targets(), other.targets())


# ---------------------------------------------------------------------------------------
# 5xx


@pytest.mark.time_limit(20)
def test_5xx_retried_and_ejected(sluice, make_backend):
    """A backend answering 500, with 5xx in --retry-on and --eject-on and --eject-after 3:
    a steady client sees only 200s; the backend is ejected after exactly 3 responses
    (logged once, naming the 5xx) and gets no request after that."""
    good = make_backend(echo(), name="good")
    bad = make_backend(fixed(500, body=b"oops"), name="bad")
    sluice.start([good, bad], args=["--retry-on", "connect,reset,timeout,5xx",
                                    "--eject-on", "connect,reset,timeout,5xx",
                                    "--eject-after", "3", "--eject-time", "30s"])
    client = SteadyClient(sluice.port, 40, interval=0.0).start()
    client.join(15)
    assert client.failures() == [], client.failures()[:5]
    assert {r[2] for r in client.results} == {"good"}
    lines = log_lines(sluice, ejected_re(bad.address))
    assert len(lines) == 1, sluice.stderr_text()
    assert re.search(r"3 consecutive failures \(last: (status_)?5xx\)$", lines[0]), lines[0]
    assert len(bad.requests) == 3, bad.targets()
    st = assert_quiescent(sluice)
    assert st["retries"] == 3 and st["ejections"] == 1 and st["backends_available"] == 1, st


@pytest.mark.time_limit(20)
def test_5xx_relayed_when_not_retried(make_sluice, make_backend):
    """Without 5xx in --retry-on (the default), a backend's 500 reaches the client as it
    is (status and body), every other request under round robin. With 5xx in --retry-on,
    a POST's 500 is still relayed as is (a POST is never replayed) and the good backend
    never sees it, while GETs are retried to 200."""
    good = make_backend(echo(), name="good")
    bad = make_backend(fixed(500, headers=[("X-From", "bad")], body=b"oops"), name="bad")
    s = make_sluice().start([good, bad])
    statuses = []
    for i in range(20):
        r = request(s.port, "GET", f"/plain/{i}")
        statuses.append(r.status)
        if r.status == 500:
            assert r.body == b"oops" and r.header("x-from") == "bad", r
        else:
            assert Echoed(r).backend == "good"
    assert statuses.count(500) == 10 and statuses.count(200) == 10, statuses
    assert all(statuses[i] != statuses[i + 1] for i in range(19)), statuses
    assert not log_lines(s, "ejected"), "500s ejected a backend without 5xx in --eject-on"
    assert_quiescent(s)
    s.stop()

    bad.clear()
    s = make_sluice().start([good, bad], args=["--retry-on", "connect,reset,timeout,5xx",
                                               "--eject-after", "0"])
    post_statuses = []
    for i in range(6):
        r = request(s.port, "POST", f"/post/{i}", body=b"data")
        post_statuses.append(r.status)
        if r.status == 500:
            assert r.body == b"oops", r
            assert f"/post/{i}" not in good.targets(), "a POST was retried after a 500"
    assert post_statuses.count(500) == 3, post_statuses
    assert len(bad.requests) == 3
    for i in range(6):
        assert Echoed(request(s.port, "GET", f"/get/{i}")).backend == "good"
    assert_quiescent(s)


# ---------------------------------------------------------------------------------------
# Responses broken off


@pytest.mark.time_limit(20)
def test_backend_closing_mid_response_is_ejected(sluice, make_backend):
    """A backend that sends its head and half its body, then closes: a response already
    under way cannot be retried, so the client sees its connection closed before the body
    is complete, but only for the first few requests (at most --eject-after 3): the
    broken-off responses count as resets, the backend is ejected, and every later request
    succeeds."""
    good = make_backend(echo(), name="good")
    broken = make_backend(truncated_body(4096), name="broken")
    sluice.start([good, broken], args=["--eject-after", "3", "--eject-time", "30s"])
    outcomes = []
    for i in range(30):
        with Client(sluice.port, timeout=5) as c:
            try:
                r = c.request("GET", f"/t/{i}")
                outcomes.append(Echoed(r).backend)
            except ConnectionClosed as e:
                # read_response had the head; .partial is the body that got through.
                assert e.partial == b"t" * len(e.partial) and len(e.partial) <= 2048, \
                    f"not a prefix of the backend's body: {e.partial[:100]!r}"
                outcomes.append(("truncated", len(e.partial)))
    truncated = [i for i, o in enumerate(outcomes) if isinstance(o, tuple)]
    assert 1 <= len(truncated) <= 3, outcomes
    assert all(o == "good" for o in outcomes[truncated[-1] + 1:]), outcomes
    assert len(broken.requests) == len(truncated)
    lines = log_lines(sluice, ejected_re(broken.address))
    assert len(lines) == 1 and "last: reset" in lines[0], sluice.stderr_text()
    assert_quiescent(sluice)


@pytest.mark.time_limit(20)
def test_post_to_resetting_backend_502_not_retried(sluice, make_backend):
    """A backend that resets every request: a GET to it is retried on the other backend
    (200), a POST is not (502, and the good backend never sees it)."""
    good = make_backend(echo(), name="good")
    bad = make_backend(reset(), name="bad")
    sluice.start([good, bad], args=["--eject-after", "0"])
    for i in range(6):
        assert Echoed(request(sluice.port, "GET", f"/get/{i}")).backend == "good"
    statuses = []
    for i in range(6):
        r = request(sluice.port, "POST", f"/post/{i}", body=b"x" * 100)
        statuses.append(r.status)
        if r.status == 502:
            assert f"/post/{i}" in bad.targets() and f"/post/{i}" not in good.targets()
        else:
            assert Echoed(r).backend == "good"
    assert 502 in statuses, statuses
    assert_quiescent(sluice)


# ---------------------------------------------------------------------------------------
# Active health checks


HEALTH_ARGS = ["--health-path", "/health", "--health-interval", "100ms",
               "--health-timeout", "300ms", "--health-rise", "2", "--health-fall", "2"]


@pytest.mark.time_limit(30)
def test_active_check_down_then_up(sluice, make_backend):
    """Active checks (100 ms interval, fall 2, rise 2): when B's health path answers 503,
    `is down: active check failed (status 503)` is logged once and B gets no request
    (though it would answer them: only its health path fails), while probes keep coming.
    When the path answers 200 again, `is up` is logged once and B takes its share again.
    The probes are `GET /health HTTP/1.1` with User-Agent sluice-health-check, Connection:
    close and (by default) the backend's address as Host."""
    ha, hb = health_endpoint(), health_endpoint()
    a, b = make_backend(ha, name="A"), make_backend(hb, name="B")
    sluice.start([a, b], args=HEALTH_ARGS)
    assert _wait(lambda: hb.probes >= 2, 3.0), "no probes reached B"
    probe = next(r for r in b.requests if r.path == "/health")
    assert (probe.method, probe.target, probe.version) == ("GET", "/health", "HTTP/1.1")
    assert probe.header("user-agent") == "sluice-health-check"
    assert probe.header("host") == b.address, probe.headers
    assert "close" in probe.connection_tokens()

    hb.set_status(503)
    down_re = rf"^sluice: warn: backend {re.escape(b.address)} is down: active check failed " \
              r"\(status 503\)$"
    sluice.wait_for_line(down_re, timeout=3.0)
    before = len(traffic(b))
    probes = hb.probes
    names = [Echoed(request(sluice.port, "GET", f"/while-down/{i}")).backend for i in range(30)]
    assert set(names) == {"A"}, names
    assert len(traffic(b)) == before, "a backend marked down got requests"
    assert _wait(lambda: hb.probes >= probes + 2, 3.0), "probes stopped while down"
    assert sluice.stats()["backends_available"] == 1

    hb.set_status(200)
    up_re = rf"^sluice: backend {re.escape(b.address)} is up: active checks pass$"
    sluice.wait_for_line(up_re, timeout=3.0)
    names = [Echoed(request(sluice.port, "GET", f"/after-up/{i}")).backend for i in range(20)]
    assert names.count("B") == 10, names
    assert len(log_lines(sluice, down_re)) == 1, sluice.stderr_text()
    assert len(log_lines(sluice, up_re)) == 1, sluice.stderr_text()
    assert not log_lines(sluice, rf"backend {re.escape(a.address)} is (down|up)")
    assert a.errors == [] and b.errors == []
    assert_quiescent(sluice)


@pytest.mark.time_limit(20)
def test_active_checks_start_healthy(sluice, make_backend):
    """Backends start healthy: with a health path that always fails (500) and a slow
    interval (5 s, fall 3), the first requests right after start-up succeed."""
    hb = health_endpoint(status=500)
    b = make_backend(hb, name="B")
    sluice.start([b], args=["--health-path", "/health", "--health-interval", "5s",
                            "--health-fall", "3"])
    for i in range(20):
        assert Echoed(request(sluice.port, "GET", f"/early/{i}")).backend == "B"
    assert not log_lines(sluice, r"is down"), sluice.stderr_text()
    assert_quiescent(sluice)


@pytest.mark.time_limit(20)
def test_active_check_failure_reasons_and_no_backend(sluice, make_backend):
    """A backend refusing connections is marked down with `(connection refused)`, one whose
    health path never answers with `(timed out after 100 ms)` (--health-timeout 100ms);
    with both down a request gets the fast 503 `no healthy backend available`, and the
    hanging backend gets no request other than probes."""
    dead = RefusingPort()
    try:
        hang = make_backend(route({"/health": stall()}), name="hang")
        sluice.start([dead.address, hang],
                     args=["--health-path", "/health", "--health-interval", "100ms",
                           "--health-timeout", "100ms", "--health-fall", "1"])
        sluice.wait_for_line(rf"^sluice: warn: backend {re.escape(dead.address)} is down: active "
                             r"check failed \(connection refused\)$", timeout=3.0)
        sluice.wait_for_line(rf"^sluice: warn: backend {re.escape(hang.address)} is down: active "
                             r"check failed \(timed out after 100 ms\)$", timeout=3.0)
        r, elapsed = timed(sluice.port, target="/nothing")
        assert r.status == 503 and NO_BACKEND in r.body, r
        assert elapsed < 0.5
        assert [q for q in hang.requests if q.path != "/health"] == []
        assert_quiescent(sluice)
    finally:
        dead.release()


@pytest.mark.time_limit(20)
def test_active_check_method_host_and_status_range(sluice, make_backend):
    """--health-method HEAD, --health-host and --health-status 200-204: probes are HEAD
    requests with that Host; a 204 passes, a 302 (outside the range, though it would pass
    the default 200-399) fails with `(status 302)`, and a 200 brings the backend back."""
    hb = health_endpoint(status=204)
    b = make_backend(hb, name="B")
    sluice.start([b], args=["--health-path", "/health", "--health-method", "HEAD",
                            "--health-host", "health.example", "--health-status", "200-204",
                            "--health-interval", "100ms", "--health-fall", "1",
                            "--health-rise", "1"])
    assert _wait(lambda: hb.probes >= 2, 3.0), "no probes"
    probe = next(r for r in b.requests if r.path == "/health")
    assert probe.method == "HEAD" and probe.header("host") == "health.example", probe.headers
    assert not log_lines(sluice, "is down")
    hb.set_status(302)
    sluice.wait_for_line(rf"^sluice: warn: backend {re.escape(b.address)} is down: active check "
                         r"failed \(status 302\)$", timeout=3.0)
    r = request(sluice.port, "GET", "/down")
    assert r.status == 503 and NO_BACKEND in r.body, r
    hb.set_status(200)
    sluice.wait_for_line(rf"^sluice: backend {re.escape(b.address)} is up", timeout=3.0)
    assert Echoed(request(sluice.port, "GET", "/up")).backend == "B"
    assert_quiescent(sluice)


@pytest.mark.time_limit(20)
def test_active_passes_end_an_ejection(sluice, make_backend):
    """Active and passive together: a backend whose health path passes but whose real
    responses are 500 is ejected by passive detection (5xx counted, --eject-after 2) for a
    long cool-down (30 s). Once it answers properly, `rise` (2) passing probes end the
    ejection (`ejection ended by 2 passing active checks`) long before the cool-down, and
    it takes traffic again. The client never sees the 500s (5xx retried)."""
    inner = switchable(fixed(500, body=b"oops"))
    flaky = make_backend(health_endpoint(then=inner), name="flaky")
    good = make_backend(echo(), name="good")
    sluice.start([good, flaky], args=HEALTH_ARGS + [
        "--eject-on", "connect,reset,timeout,5xx", "--retry-on", "connect,reset,timeout,5xx",
        "--eject-after", "2", "--eject-time", "30s"])
    # Stop sending (and make the backend healthy) as soon as it is ejected: the passing
    # probes end the ejection within ~200 ms, and a 500 after that would eject it again.
    for i in range(6):
        assert Echoed(request(sluice.port, "GET", f"/pre/{i}")).backend == "good"
        if log_lines(sluice, ejected_re(flaky.address)):
            break
    else:
        sluice.wait_for_line(ejected_re(flaky.address), timeout=2.0)
    inner.set(echo())
    ejected_at = time.monotonic()
    # Normally two passing probes end it. On a busy machine a probe may time out (300 ms)
    # twice in a row and mark the backend down; its rise then ends the ejection, and says so.
    sluice.wait_for_line(rf"^sluice: backend {re.escape(flaky.address)}(: ejection ended by 2 "
                         r"passing active checks| is up: active checks pass, ejection ended)$",
                         timeout=5.0)
    took = time.monotonic() - ejected_at
    assert took < 5.0, f"ejection ended after {took:.2f}s"
    # The same busy machine may have timed the good backend's probes out too: it takes its
    # share again once it is up.
    if log_lines(sluice, rf"^sluice: warn: backend {re.escape(good.address)} is down"):
        sluice.wait_for_line(rf"^sluice: backend {re.escape(good.address)} is up: active checks pass$", timeout=5.0)
    names = [Echoed(request(sluice.port, "GET", f"/post/{i}")).backend for i in range(10)]
    assert names.count("flaky") == 5, names
    assert len(log_lines(sluice, ejected_re(flaky.address))) == 1, sluice.stderr_text()
    assert_quiescent(sluice)


# ---------------------------------------------------------------------------------------
# Limits on ejection and on retries


@pytest.mark.time_limit(20)
def test_eject_max_percent_caps_ejections(sluice, make_backend):
    """4 backends, 3 of them refusing connections, --eject-max-percent 50: only 2 are
    ejected; the third dead one is reported `not ejected: 2 of 4 backends already are (max
    50%)` and stays in the pool. With --tries 4 (and a generous retry budget) every request
    still succeeds through retries."""
    good = make_backend(echo(), name="good")
    dead = [RefusingPort() for _ in range(3)]
    try:
        sluice.start([good] + [d.address for d in dead],
                     args=["--eject-after", "2", "--eject-max-percent", "50",
                           "--eject-time", "30s", "--tries", "4", "--retry-budget", "100"])
        for i in range(30):
            r = request(sluice.port, "GET", f"/cap/{i}")
            assert r.status == 200 and Echoed(r).backend == "good", (i, r)
        ejected = [d for d in dead if log_lines(sluice, ejected_re(d.address))]
        assert len(ejected) == 2, sluice.stderr_text()
        capped = log_lines(sluice, r"^sluice: warn: backend 127\.0\.0\.1:\d+: 2 consecutive failures "
                                   r"\(last: connect\), not ejected: 2 of 4 backends already "
                                   r"are \(max 50%\)$")
        assert len(capped) >= 1, sluice.stderr_text()
        not_ejected = [d for d in dead if d not in ejected][0]
        assert not_ejected.address in capped[0]
        st = assert_quiescent(sluice)
        assert st["ejections"] == 2 and st["backends_available"] == 2, st
    finally:
        for d in dead:
            d.release()


@pytest.mark.time_limit(20)
def test_tries_bounds_attempts(make_sluice, make_backend):
    """--tries N caps the tries per request, the first included: with 3 backends that
    reset every request and 1 good one (no ejection, --retry-budget 100), --tries 1 sends
    every request once (no retry: the ones to a resetting backend get 502); --tries 2 sends
    none more than twice; --tries 4 gets every request through. (Only 4 requests with
    --tries 4: round robin then starts each request on the first resetting backend, so
    each needs 3 retries, and the budget holds a burst of 10 plus one per request.)"""
    good = make_backend(echo(), name="good")
    bad = [make_backend(reset(), name=f"bad{i}") for i in range(3)]
    pool = [good] + bad
    common = ["--eject-after", "0", "--retry-budget", "100"]
    for tries, n in ((1, 20), (2, 20), (4, 4)):
        for b in pool:
            b.clear()
        s = make_sluice().start(pool, args=common + ["--tries", str(tries)])
        statuses = [request(s.port, "GET", f"/t{tries}/{i}").status for i in range(n)]
        st = assert_quiescent(s)
        attempts = sum(len(b.requests) for b in pool)
        assert set(statuses) <= {200, 502}, statuses
        assert statuses.count(200) == len(good.requests), (statuses, len(good.requests))
        assert attempts == n + st["retries"] and attempts <= tries * n, (attempts, st)
        if tries == 1:
            assert st["retries"] == 0 and statuses.count(502) == 15, (statuses, st)
        elif tries == 2:
            assert statuses.count(502) > 0, statuses
        else:
            assert statuses == [200] * n, statuses
        s.stop()


def _flood(port, seconds, max_requests):
    """Sequential GETs as fast as possible for up to `seconds` or `max_requests`. Returns
    (statuses, elapsed)."""
    statuses = []
    t0 = time.monotonic()
    c = None
    try:
        while len(statuses) < max_requests and time.monotonic() - t0 < seconds:
            if c is None:
                c = Client(port, timeout=5)
            r = c.request("GET", f"/flood/{len(statuses)}")
            statuses.append(r.status)
            if "close" in r.connection_tokens():
                c.close()
                c = None
    finally:
        if c is not None:
            c.close()
    return statuses, time.monotonic() - t0


@pytest.mark.time_limit(30)
def test_retry_budget_bounds_retries(make_sluice, make_backend):
    """A pool of a good backend (weight 4) and one that resets every request (weight 1,
    --eject-after 0 so it stays in): a flood of sequential GETs sends a fifth of them to
    the resetting one first. With --retry-budget 0 only the floor is left (a burst of 10,
    then 10 retries per second), so retries stay within 10 + 10/s and more than 10 resets
    reach the client as 502; each failed try was either retried or answered 502, never
    both. With the default budget (20% of requests plus the floor) the same flood sees at
    most 3 502s."""
    good = make_backend(echo(), name="good")
    bad = make_backend(reset(), name="bad")
    pool = [f"{good.address},weight=4", f"{bad.address},weight=1"]
    common = ["--strategy", "weighted", "--eject-after", "0"]

    s = make_sluice().start(pool, args=common + ["--retry-budget", "0"])
    statuses, elapsed = _flood(s.port, 1.0, 400)
    st = assert_quiescent(s)
    failed_tries = len(bad.requests)
    assert failed_tries >= 40, f"flood too slow: {len(statuses)} requests in {elapsed:.2f}s"
    assert set(statuses) <= {200, 502}, set(statuses)
    n502 = statuses.count(502)
    assert st["retries"] <= 10 + 10 * elapsed + 2, (st, elapsed)
    assert n502 + st["retries"] == failed_tries, (n502, st, failed_tries)
    assert n502 > 10, f"only {n502} 502s out of {failed_tries} resets: budget not enforced"
    # Every 502 here is a retry the budget refused (the other backend was always there).
    assert st.get("retries_refused_by_budget", n502) == n502, st
    s.stop()

    bad.clear()
    good.clear()
    s = make_sluice().start(pool, args=common)
    statuses, elapsed = _flood(s.port, 1.0, 400)
    st = assert_quiescent(s)
    assert len(bad.requests) >= 40, f"flood too slow: {len(statuses)} in {elapsed:.2f}s"
    assert statuses.count(502) <= 3, (statuses.count(502), st, len(bad.requests))
    assert st["retries"] + statuses.count(502) == len(bad.requests)
    assert st.get("retries_refused_by_budget", statuses.count(502)) == statuses.count(502), st
