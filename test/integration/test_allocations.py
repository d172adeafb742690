"""The zero-allocation proof: no heap allocation per proxied request in steady state."""

import threading

import pytest

from backends import chunked, route
from client import Client, Echoed, build_request, chunk_body
from test_handlers import run_load as run_handler_load
from test_handlers import start_body, start_proxy

CHUNKED_PARTS = [b"alpha ", b"beta " * 50, b"gamma " * 300, b"omega\n"]
CHUNKED_EXPECTED = b"".join(CHUNKED_PARTS)
POST_PARTS = [b"p" * 100, b"q" * 1000, b"r" * 7]
POST_BODY = chunk_body(POST_PARTS, extensions=[";x=1", "", ""], trailers=[("X-T", "1")])
POST_EXPECTED = b"".join(POST_PARTS)
THREADS = 8
RECONNECT_EVERY = 250


def _worker(port, tid, count, errors):
    """Send `count` requests mixing GET, chunked POST, chunked response and pipelined
    batches of 5; reconnect now and then so accept/close paths are counted too."""
    done = 0
    next_reconnect = RECONNECT_EVERY
    c = Client(port, timeout=10)
    try:
        while done < count:
            if done >= next_reconnect:
                next_reconnect += RECONNECT_EVERY
                c.close()
                c = Client(port, timeout=10)
            kind = (done // 5 + tid) % 4
            if kind == 0:
                target = f"/get/{tid}/{done}"
                e = Echoed(c.request("GET", target))
                assert e.target == target, e.target
                done += 1
            elif kind == 1:
                e = Echoed(c.request("POST", f"/post/{tid}/{done}",
                                     headers=[("Transfer-Encoding", "chunked")],
                                     body=POST_BODY))
                assert e.body == POST_EXPECTED
                done += 1
            elif kind == 2:
                r = c.request("GET", f"/chunked/{tid}/{done}")
                assert r.status == 200 and r.body == CHUNKED_EXPECTED, r
                done += 1
            else:
                n = min(5, count - done)
                targets = [f"/pipe/{tid}/{done + i}" for i in range(n)]
                c.send(b"".join(build_request("GET", t) for t in targets))
                got = [Echoed(c.read_response()).target for _ in targets]
                assert got == targets, got
                done += n
    except Exception as e:  # noqa: BLE001 - collected and reported by the test
        errors.append(f"thread {tid} after {done} requests: {e!r}")
    finally:
        c.close()


def run_load(port, total, threads=THREADS):
    errors = []
    per = total // threads
    ts = [threading.Thread(target=_worker, args=(port, i, per, errors), daemon=True)
          for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(90.0)
    assert not any(t.is_alive() for t in ts), "load threads did not finish"
    assert not errors, errors[:5]
    return per * threads


@pytest.mark.time_limit(150)
def test_no_heap_allocations_after_warmup(sluice, make_backend):
    """With --workers 2, after 1,000 warm-up requests, 10,000 more proxied keep-alive
    requests (plain GETs, chunked POSTs, chunked responses, pipelined batches, over 8
    concurrent connections) leave heap_allocations_after_startup unchanged, and the exit
    line after SIGTERM agrees."""
    mapping = {"/chunked": chunked(CHUNKED_PARTS, delay=0)}
    backends = [make_backend(route(mapping)), make_backend(route(mapping))]
    sluice.start(backends, workers=2)
    warm = run_load(sluice.port, 1000)
    before = sluice.stats()
    n = run_load(sluice.port, 10000)
    after = sluice.stats()
    print(f"warm-up requests: {warm}, measured requests: {n}")
    print(f"stats before: {before}")
    print(f"stats after:  {after}")
    key = "heap_allocations_after_startup"
    assert key in before and key in after, (before, after)
    assert after[key] == before[key], \
        f"{after[key] - before[key]} heap allocations during {n} proxied requests"
    rc = sluice.stop(timeout=10.0)
    assert rc == 0
    at_exit = sluice.exit_allocations()
    print(f"exit line: heap_allocations_after_startup={at_exit}")
    assert at_exit == after[key], f"exit line says {at_exit}, stats said {after[key]}"
    assert sum(len(b.requests) for b in backends) == warm + n


@pytest.mark.time_limit(150)
def test_no_heap_allocations_with_tls_to_backends(sluice, make_backend, tmp_path):
    """The same load to two backends over TLS (a pool's `.tls`, verified against a CA made
    here): handshakes, resumptions, pooled TLS connections and active checks over TLS leave
    heap_allocations_after_startup at 0 (AWS-LC allocates from the workers' and the control
    thread's bounded pools)."""
    from conftest import write_zon
    from test_backend_tls import make_pki, server_context
    pki = make_pki(tmp_path)
    mapping = {"/chunked": chunked(CHUNKED_PARTS, delay=0)}
    backends = [make_backend(route(mapping), tls=server_context(pki)) for _ in range(2)]
    path = write_zon(tmp_path / "tls.zon", {"listen": "127.0.0.1:0", "pools": {"app": {
        "backends": [b.address for b in backends], "keepalive": 4, "tls": {"ca": pki["ca"]},
        "health": {"path": "/health", "interval": "200ms"}}}})
    sluice.start_config(path, workers=2)
    run_load(sluice.port, 1000)
    before = sluice.stats()
    n = run_load(sluice.port, 4000)
    after = sluice.stats()
    key = "heap_allocations_after_startup"
    assert before[key] == 0 and after[key] == 0, (before, after)
    assert sluice.stop(timeout=10.0) == 0
    assert sluice.exit_allocations() == 0
    handshakes = sum(len(b.tls_handshakes) for b in backends)
    resumed = sum(1 for b in backends for h in b.tls_handshakes if h["reused"])
    print(f"{n} requests; TLS handshakes at the backends: {handshakes}, resumed: {resumed}")
    assert handshakes > 2 and resumed > 0


# JavaScript handlers that proxy (Response.proxy) and read bodies: the same proof.


@pytest.mark.time_limit(150)
def test_no_heap_allocations_per_proxied_request(sluice, make_backend, tmp_path):
    """Thousands of handler calls that proxy (rewritten and not, some refused) with two
    workers leave heap_allocations_after_startup unchanged."""
    backend = make_backend()
    start_proxy(sluice, tmp_path, [backend], workers=2)
    targets = ["/rewrite?id=1", "/as/is", "/nopool", "/rewrite?id=2"]
    run_handler_load(sluice.port, targets, 400, (200,))
    before = sluice.stats()
    run_handler_load(sluice.port, targets, 3000, (200,))
    after = sluice.stats()
    key = "heap_allocations_after_startup"
    assert after[key] == before[key], (before, after)


@pytest.mark.time_limit(150)
def test_no_heap_allocations_per_request_with_a_body(sluice, make_backend, tmp_path):
    """Thousands of POSTs whose bodies the handler reads (as text, as JSON) or proxies on,
    with two workers, leave heap_allocations_after_startup unchanged."""
    backend = make_backend()
    start_body(sluice, tmp_path, backend.address, workers=2)
    targets = ["/echo", "/json", "/proxy"]
    run_handler_load(sluice.port, targets, 400, (200,), body=b'{"k": "v", "n": [1, 2, 3]}')
    before = sluice.stats()
    run_handler_load(sluice.port, targets, 3000, (200,), body=b'{"k": "v", "n": [1, 2, 3]}')
    after = sluice.stats()
    key = "heap_allocations_after_startup"
    assert after[key] == before[key], (before, after)
