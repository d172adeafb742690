"""SIGTERM/SIGINT: graceful drain, its deadline, and the second-signal escape hatch."""

import signal
import threading
import time

import pytest

from backends import slow_head
from client import Client, Echoed, is_refused, request, wait_until


class InFlight:
    """One request running in a thread; .result is the Response or the exception."""

    def __init__(self, port, target="/slow", timeout=10.0):
        self.result = None
        self.finished_at = None
        self._thread = threading.Thread(target=self._run, args=(port, target, timeout),
                                        daemon=True)
        self._thread.start()

    def _run(self, port, target, timeout):
        try:
            self.result = request(port, "GET", target, timeout=timeout)
        except Exception as e:  # noqa: BLE001 - inspected by the test
            self.result = e
        self.finished_at = time.monotonic()

    def join(self, timeout):
        self._thread.join(timeout)
        return not self._thread.is_alive()


def _exit_line_ok(sluice):
    assert sluice.exit_allocations() is not None, \
        f"no `sluice: exit heap_allocations_after_startup=N` line:\n{sluice.stderr_text()}"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_with_no_traffic_exits_0(sluice, backend, sig):
    """SIGTERM/SIGINT with nothing in flight: exit 0 quickly, with the exit line."""
    sluice.start([backend])
    t0 = time.monotonic()
    rc = sluice.stop(timeout=5.0, sig=sig)
    assert rc == 0
    assert time.monotonic() - t0 < 1.0
    _exit_line_ok(sluice)


@pytest.mark.time_limit(20)
def test_sigterm_drains_in_flight_request(sluice, make_backend):
    """SIGTERM while a slow request (backend answers after 3 s) is in flight: new
    connections are refused soon after the signal, the in-flight request still completes
    with 200, and sluice then exits 0."""
    b = make_backend(slow_head(3.0))
    sluice.start([b], workers=2)
    flight = InFlight(sluice.port)
    assert b.wait_for_requests(1, 3.0), "the slow request never reached the backend"
    sluice.signal(signal.SIGTERM)
    t_sig = time.monotonic()
    refused = wait_until(lambda: is_refused(sluice.port, 0.5), 1.5, interval=0.05)
    assert refused, "new connections were still accepted 1.5 s after SIGTERM"
    assert flight.finished_at is None, "the in-flight request ended before its response"
    assert flight.join(5.0)
    assert not isinstance(flight.result, Exception), f"in-flight request failed: {flight.result!r}"
    assert Echoed(flight.result).target == "/slow"
    rc = sluice.wait(5.0)
    assert rc == 0, f"exit code {rc} after a clean drain"
    assert time.monotonic() - t_sig < 5.0
    _exit_line_ok(sluice)


@pytest.mark.time_limit(20)
def test_sigterm_closes_idle_keepalive_connections(sluice, backend):
    """Idle keep-alive client connections are closed on drain (not held until the drain
    deadline), and sluice exits 0 promptly."""
    sluice.start([backend])
    clients = [Client(sluice.port) for _ in range(3)]
    try:
        for i, c in enumerate(clients):
            assert Echoed(c.request("GET", f"/idle/{i}")).target == f"/idle/{i}"
        t0 = time.monotonic()
        sluice.signal(signal.SIGTERM)
        for c in clients:
            assert c.wait_closed(2.0), "idle keep-alive connection not closed on drain"
        rc = sluice.wait(3.0)
        assert rc == 0
        assert time.monotonic() - t0 < 3.0
    finally:
        for c in clients:
            c.close()


@pytest.mark.time_limit(20)
def test_second_sigterm_exits_at_once(sluice, make_backend):
    """A second SIGTERM during a drain exits at once, with code 1."""
    b = make_backend(slow_head(10.0))
    sluice.start([b])
    flight = InFlight(sluice.port, timeout=12.0)
    assert b.wait_for_requests(1, 3.0)
    sluice.signal(signal.SIGTERM)
    time.sleep(0.3)
    assert sluice.running(), "sluice exited before its in-flight request finished"
    t0 = time.monotonic()
    sluice.signal(signal.SIGTERM)
    rc = sluice.wait(2.0)
    assert rc is not None, "still running 2 s after the second SIGTERM"
    assert time.monotonic() - t0 < 1.0
    assert rc == 1, f"exit code {rc} after a forced exit (docs/ARCHITECTURE.md, Operations: code 1)"
    assert flight.join(3.0), "the in-flight client was left hanging after exit"


@pytest.mark.time_limit(20)
def test_drain_timeout_bounds_exit(sluice, make_backend):
    """`--drain-timeout 1s` with a request that would take 5 s: sluice gives up on it and
    exits about 1 s after SIGTERM (not before the deadline, not long after), code 0; the
    client's connection is closed rather than left hanging."""
    b = make_backend(slow_head(5.0))
    sluice.start([b], args=["--drain-timeout", "1s"])
    flight = InFlight(sluice.port, timeout=8.0)
    assert b.wait_for_requests(1, 3.0)
    t0 = time.monotonic()
    sluice.signal(signal.SIGTERM)
    rc = sluice.wait(4.0)
    elapsed = time.monotonic() - t0
    assert rc is not None, "sluice still running 4 s after SIGTERM with --drain-timeout 1s"
    assert 0.8 <= elapsed <= 2.0, f"exited {elapsed:.2f}s after SIGTERM (drain timeout 1s)"
    assert rc == 0, f"exit code {rc} (docs/ARCHITECTURE.md, Operations: 0 for a drain, including its deadline)"
    assert flight.join(3.0), "the in-flight client was left hanging"
    r = flight.result
    assert isinstance(r, Exception) or r.status in (502, 503, 504), \
        f"a request abandoned at the drain deadline looked successful: {r!r}"
