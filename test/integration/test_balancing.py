"""Which backend serves a request: every --strategy, weights, drained backends, pools of 1
and 64, and the per-backend connection cap.

Strategies whose choice is deterministic per worker (round robin, smooth weighted round
robin) are checked exactly with --workers 1; the random ones (random, least_conn's power of
two choices, hash spread) with tolerances of at least four standard deviations, so a
correct balancer fails them far less often than once in ten thousand runs.
"""

import re
import socket
import threading
import time
from collections import Counter

import pytest

from backends import echo, slow_head
from conftest import assert_quiescent  # noqa: E402
from client import Client, Deadline, Echoed, build_request, read_response, request

STRATEGIES = ["round_robin", "weighted", "least_conn", "random", "hash", "sticky"]
COOKIE_RE = re.compile(r"^(?P<name>[^=;\s]+)=(?P<value>[0-9a-fA-F]{16}); Path=/; HttpOnly$")


# ---------------------------------------------------------------------------------------
# Helpers


def who(port, target="/", headers=None, client=None):
    """The name of the backend that answered one GET (fresh connection unless `client`)."""
    r = (client.request("GET", target, headers=headers) if client
         else request(port, "GET", target, headers=headers))
    return Echoed(r).backend


def sequence(port, n, target="/seq", headers=None):
    """Names of the backends that answered n sequential GETs on one keep-alive connection."""
    with Client(port) as c:
        return [who(port, f"{target}/{i}", headers, client=c) for i in range(n)]


def set_cookie(resp, name="sluice_backend"):
    """The value of the sticky cookie set by `resp`, or None. Fails on a malformed one."""
    values = [v for v in resp.header_all("set-cookie") if v.startswith(name + "=")]
    if not values:
        return None
    assert len(values) == 1, f"more than one {name} cookie: {resp.headers}"
    m = COOKIE_RE.match(values[0])
    assert m and m.group("name") == name, f"malformed sticky cookie: {values[0]!r}"
    return m.group("value")


def get_from(port, source_ip, target="/ip"):
    """One GET on a connection whose source address is `source_ip` (any 127.0.0.0/8)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.settimeout(5.0)
        s.bind((source_ip, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(build_request("GET", target))
        return read_response(s)
    finally:
        s.close()


def concurrent_gets(port, n_threads, seconds, target="/c"):
    """n_threads keep-alive clients sending GETs back to back for `seconds`. Returns the
    answering backend names and any errors."""
    names, errors = [], []
    lock = threading.Lock()
    start = threading.Barrier(n_threads, timeout=10)

    def run(tid):
        try:
            with Client(port, timeout=10) as c:
                start.wait()
                end = time.monotonic() + seconds
                i = 0
                while time.monotonic() < end:
                    name = who(port, f"{target}/{tid}/{i}", client=c)
                    with lock:
                        names.append(name)
                    i += 1
        except Exception as e:  # noqa: BLE001 - collected and asserted by the caller
            with lock:
                errors.append(f"thread {tid}: {e!r}")

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 15)
    assert not any(t.is_alive() for t in threads), "client threads did not finish"
    return names, errors


# ---------------------------------------------------------------------------------------
# Round robin, weights, draining


def test_round_robin_three_backends_even(sluice, make_backend):
    """Round robin over 3 backends with --workers 1: 300 sequential requests give each
    backend exactly 100, in a fixed rotation (each name recurs every third request)."""
    bs = [make_backend(echo()) for _ in range(3)]
    sluice.start(bs, args=["--strategy", "round_robin"])
    names = sequence(sluice.port, 300)
    assert Counter(names) == {b.name: 100 for b in bs}, Counter(names)
    assert len(set(names[:3])) == 3, names[:3]
    assert all(names[i] == names[i % 3] for i in range(300)), names[:12]
    assert_quiescent(sluice)


def test_round_robin_two_backends_alternate(sluice, make_backend):
    """Round robin is the default strategy; over 2 backends with --workers 1 it alternates
    exactly, across client connections too (the balancer is per worker, not per
    connection)."""
    a, b = make_backend(echo()), make_backend(echo())
    sluice.start([a, b])
    names = [who(sluice.port, f"/alt/{i}") for i in range(20)]
    names += sequence(sluice.port, 20)
    assert set(names) == {a.name, b.name}
    assert all(names[i] != names[i + 1] for i in range(len(names) - 1)), names
    assert len(a.requests) == len(b.requests) == 20
    assert_quiescent(sluice)


def test_weighted_three_to_one(sluice, make_backend):
    """--strategy weighted with weights 3 and 1, --workers 1: 400 requests split 300/100
    (smooth weighted round robin is exact per cycle of 4; a tolerance of 2% is allowed), and
    the split is smooth: never more than 3 requests in a row to the heavy backend, never two
    in a row to the light one."""
    heavy, light = make_backend(echo()), make_backend(echo())
    sluice.start([f"{heavy.address},weight=3", f"{light.address},weight=1"],
                 args=["--strategy", "weighted"])
    names = sequence(sluice.port, 400)
    c = Counter(names)
    assert abs(c[heavy.name] - 300) <= 8 and c[heavy.name] + c[light.name] == 400, c
    runs = "".join("H" if n == heavy.name else "L" for n in names)
    assert "HHHH" not in runs and "LL" not in runs, runs[:80]
    assert_quiescent(sluice)


def test_weight_zero_drains(sluice, make_backend):
    """A backend with weight=0 is never chosen: 100 round-robin requests over
    {a, drained, c} all go to a and c, 50 each."""
    a, drained, c = make_backend(echo()), make_backend(echo()), make_backend(echo())
    sluice.start([a, f"{drained.address},weight=0", c])
    names = sequence(sluice.port, 100)
    assert Counter(names) == {a.name: 50, c.name: 50}, Counter(names)
    assert drained.requests == [] and drained.connections == 0
    assert_quiescent(sluice)


@pytest.mark.time_limit(30)
def test_weight_zero_drains_under_every_strategy(make_sluice, make_backend):
    """Under each strategy, the weight-0 backend of {live, drained} gets none of 40
    requests (hash/sticky included: their key or cookie never lands on it)."""
    live, drained = make_backend(echo()), make_backend(echo())
    for strategy in STRATEGIES:
        s = make_sluice().start([live, f"{drained.address},weight=0"],
                                args=["--strategy", strategy, "--hash-key", "header:X-User"])
        for i in range(40):
            name = who(s.port, f"/w0/{i}", headers=[("X-User", f"user-{i}")])
            assert name == live.name, (strategy, i)
        s.stop()
    assert drained.requests == []


def test_random_follows_weights(sluice, make_backend):
    """--strategy random with weights 1 and 3: over 800 requests the light backend gets
    about 25% (200 +- 50; the standard deviation is 12)."""
    light, heavy = make_backend(echo()), make_backend(echo())
    sluice.start([f"{light.address},weight=1", f"{heavy.address},weight=3"],
                 args=["--strategy", "random"])
    names = sequence(sluice.port, 800)
    c = Counter(names)
    assert c[light.name] + c[heavy.name] == 800, c
    assert 150 <= c[light.name] <= 250, c
    # Not round robin in disguise: the light backend is sometimes picked twice in a row.
    pairs = sum(1 for i in range(799) if names[i] == names[i + 1] == light.name)
    assert pairs > 0, "random never picked the light backend twice in a row in 800 picks"
    assert_quiescent(sluice)


@pytest.mark.time_limit(30)
def test_least_conn_prefers_the_fast_backend(sluice, make_backend):
    """--strategy least_conn with one backend that takes 300 ms to answer and one that
    answers at once, 6 concurrent keep-alive clients for 1.5 s: the slow backend, which
    always has requests in flight, gets only a small share (round robin would give it
    half). Bound: at most 15% of the requests, and at least 10 times fewer than the fast
    one; the slow one can only take about one request per 300 ms it is idle."""
    slow = make_backend(slow_head(0.3), name="slow")
    fast = make_backend(echo(), name="fast")
    sluice.start([slow, fast], args=["--strategy", "least_conn"])
    names, errors = concurrent_gets(sluice.port, 6, 1.5)
    assert not errors, errors[:3]
    c = Counter(names)
    total = len(names)
    assert total >= 50, f"only {total} requests completed"
    assert c["slow"] <= 0.15 * total and c["fast"] >= 10 * c["slow"], c
    assert_quiescent(sluice)


# ---------------------------------------------------------------------------------------
# Hashing


@pytest.mark.time_limit(30)
def test_hash_header_sticks_spreads_and_moves_little(make_sluice, make_backend):
    """--strategy hash --hash-key header:X-User over 4 backends: a value always reaches
    the same backend (10 requests each for 5 values, on fresh and kept-alive connections);
    200 distinct values spread over all 4 (each gets 50 +- 28; sd ~6). Then sluice is
    restarted with a 5th backend added (the other four unchanged, same addresses): fewer
    than 35% of the 200 keys move (about 1/5 should), and the keys that move go to the new
    backend (Maglev moves a key between old backends only rarely: at most 2% of keys)."""
    bs = [make_backend(echo()) for _ in range(4)]
    args = ["--strategy", "hash", "--hash-key", "header:X-User"]
    s1 = make_sluice().start(bs, args=args)

    for v in range(5):
        hdr = [("X-User", f"stable-{v}")]
        got = {who(s1.port, f"/s/{v}/{i}", hdr) for i in range(5)}
        with Client(s1.port) as c:
            got |= {who(s1.port, f"/k/{v}/{i}", hdr, client=c) for i in range(5)}
        assert len(got) == 1, f"X-User stable-{v} reached {got}"

    keys = [f"user-{i}" for i in range(200)]
    with Client(s1.port) as c:
        before = {k: who(s1.port, "/h", [("X-User", k)], client=c) for k in keys}
    spread = Counter(before.values())
    assert set(spread) == {b.name for b in bs}, spread
    assert all(22 <= n <= 78 for n in spread.values()), spread
    assert_quiescent(s1)
    assert s1.stop() == 0

    new = make_backend(echo(), name="new")
    s2 = make_sluice().start(bs + [new], args=args)
    with Client(s2.port) as c:
        after = {k: who(s2.port, "/h", [("X-User", k)], client=c) for k in keys}
        # A key that seems to have moved is asked twice more, and the backend that answered
        # most often counts: a request retried after a failed connect (a backend briefly
        # refusing on a loaded machine) is answered elsewhere once, which is the retry
        # working, not the hash moving the key (this failed once with 5 "moves" between old
        # backends; a simulation of the Maglev table with these sizes gives at most 3 in 300
        # random layouts).
        for k in [k for k in keys if after[k] != before[k]]:
            answers = [after[k]] + [who(s2.port, "/h", [("X-User", k)], client=c) for _ in range(2)]
            after[k] = Counter(answers).most_common(1)[0][0]
    moved = [k for k in keys if after[k] != before[k]]
    to_new = [k for k in moved if after[k] == "new"]
    elsewhere = {k: (before[k], after[k]) for k in moved if after[k] != "new"}
    assert len(moved) < 0.35 * len(keys), f"{len(moved)} of {len(keys)} keys moved"
    assert len(to_new) >= 15, f"only {len(to_new)} keys went to the new backend"
    assert len(elsewhere) <= 4, f"keys moved between the old backends: {elsewhere}"
    assert_quiescent(s2)


def test_hash_cookie(sluice, make_backend):
    """--hash-key cookie:sid: a cookie value (among other cookies, in any position) always
    reaches the same backend; 120 values spread over all 3 backends (40 +- 25 each); a
    request without the cookie falls back to the client IP, so those all go to one
    backend."""
    bs = [make_backend(echo()) for _ in range(3)]
    sluice.start(bs, args=["--strategy", "hash", "--hash-key", "cookie:sid"])
    for v in range(4):
        forms = [f"sid=val{v}", f"a=1; sid=val{v}", f"sid=val{v}; theme=dark",
                 f"x=y; sid=val{v}; z=w"]
        got = {who(sluice.port, f"/c/{v}", [("Cookie", f)]) for f in forms for _ in range(3)}
        assert len(got) == 1, f"sid=val{v} reached {got}"
    with Client(sluice.port) as c:
        spread = Counter(who(sluice.port, "/c", [("Cookie", f"sid=v{i}")], client=c)
                         for i in range(120))
    assert set(spread) == {b.name for b in bs} and all(15 <= n <= 65 for n in spread.values()), \
        spread
    no_cookie = {who(sluice.port, f"/nc/{i}", [("Cookie", "other=1")] if i % 2 else None)
                 for i in range(20)}
    assert len(no_cookie) == 1, f"requests without the cookie reached {no_cookie}"
    assert_quiescent(sluice)


def test_hash_path(sluice, make_backend):
    """--hash-key path: a path always reaches the same backend, whatever its query string
    and whoever asks; 120 paths spread over all 3 backends (40 +- 25 each)."""
    bs = [make_backend(echo()) for _ in range(3)]
    sluice.start(bs, args=["--strategy", "hash", "--hash-key", "path"])
    for p in range(4):
        got = {who(sluice.port, f"/item/{p}?q={i}") for i in range(8)}
        got.add(who(sluice.port, f"/item/{p}"))
        assert len(got) == 1, f"/item/{p} reached {got}"
    with Client(sluice.port) as c:
        spread = Counter(who(sluice.port, f"/p/{i}", client=c) for i in range(120))
    assert set(spread) == {b.name for b in bs} and all(15 <= n <= 65 for n in spread.values()), \
        spread
    assert_quiescent(sluice)


def test_hash_ip(sluice, make_backend):
    """--strategy hash (key: the client IP by default): 40 requests from 127.0.0.1 on
    different connections and paths all reach one backend; clients from 40 other loopback
    addresses (127.0.0.2-41) spread over more than one backend, each address always to
    the same one. A missing header key falls back to the IP too."""
    bs = [make_backend(echo()) for _ in range(3)]
    sluice.start(bs, args=["--strategy", "hash"])
    same = {who(sluice.port, f"/ip/{i}") for i in range(20)}
    same |= set(sequence(sluice.port, 20))
    assert len(same) == 1, f"requests from 127.0.0.1 reached {same}"
    try:
        by_ip = {}
        for i in range(2, 42):
            ip = f"127.0.0.{i}"
            by_ip[ip] = {Echoed(get_from(sluice.port, ip)).backend for _ in range(2)}
    except OSError as e:
        pytest.skip(f"cannot bind loopback source addresses: {e}")
    assert all(len(v) == 1 for v in by_ip.values()), by_ip
    assert len({next(iter(v)) for v in by_ip.values()}) >= 2, by_ip
    assert_quiescent(sluice)


def test_hash_keys_stay_when_another_backend_fails(sluice, make_backend):
    """--strategy hash over 4 backends, one of which stops (connections refused): its keys
    are served by the others (retried, then spread over at least 2 of them, each key
    consistently), and no key of a healthy backend moves."""
    bs = [make_backend(echo()) for _ in range(4)]
    sluice.start(bs, args=["--strategy", "hash", "--hash-key", "header:X-User",
                           "--eject-after", "1", "--eject-time", "30s"])
    keys = [f"k{i}" for i in range(120)]
    with Client(sluice.port) as c:
        before = {k: who(sluice.port, "/h", [("X-User", k)], client=c) for k in keys}
    victim = bs[0]
    orphans = [k for k in keys if before[k] == victim.name]
    assert len(orphans) >= 10, Counter(before.values())
    victim.stop()
    for attempt in range(2):  # while the victim is still in the pool, and once ejected
        after = {k: who(sluice.port, "/h", [("X-User", k)]) for k in keys}
        moved = {k: (before[k], after[k]) for k in keys
                 if before[k] != victim.name and after[k] != before[k]}
        assert moved == {}, f"keys of healthy backends moved: {moved}"
        assert victim.name not in after.values()
        assert len({after[k] for k in orphans}) >= 2, {after[k] for k in orphans}
        if attempt == 0:
            first = after
    assert after == first, "the orphaned keys changed backend between rounds"
    assert_quiescent(sluice)


# ---------------------------------------------------------------------------------------
# Sticky sessions


def test_sticky_cookie_follows_its_backend_and_moves_when_it_dies(sluice, make_backend):
    """--strategy sticky: the first response sets `sluice_backend=<16 hex>; Path=/;
    HttpOnly`; 20 requests carrying that cookie all reach the same backend and get no new
    Set-Cookie. When that backend stops (listener closed) the next request with the cookie
    still gets a 200 from another backend (connect failure retried) and a new cookie with a
    different value; requests with the new cookie stay on the new backend."""
    bs = [make_backend(echo()) for _ in range(3)]
    by_name = {b.name: b for b in bs}
    sluice.start(bs, args=["--strategy", "sticky"])
    first = request(sluice.port, "GET", "/first")
    cookie = set_cookie(first)
    assert cookie is not None, f"no sticky cookie on the first response: {first.headers}"
    home = Echoed(first).backend
    with Client(sluice.port) as c:
        for i in range(20):
            r = c.request("GET", f"/s/{i}", headers=[("Cookie", f"sluice_backend={cookie}")])
            assert Echoed(r).backend == home, i
            assert set_cookie(r) is None, f"cookie re-issued while its backend is fine: {r}"
    # Requests without a cookie are balanced (and each told its backend).
    fresh = [request(sluice.port, "GET", "/nocookie") for _ in range(6)]
    assert len({Echoed(r).backend for r in fresh}) == 3
    assert all(set_cookie(r) for r in fresh)

    by_name[home].stop()
    r = request(sluice.port, "GET", "/after", headers=[("Cookie", f"sluice_backend={cookie}")])
    assert r.status == 200, r
    moved_to = Echoed(r).backend
    assert moved_to != home
    new_cookie = set_cookie(r)
    assert new_cookie is not None and new_cookie != cookie, r.headers
    for i in range(10):
        r = request(sluice.port, "GET", f"/n/{i}",
                    headers=[("Cookie", f"a=b; sluice_backend={new_cookie}")])
        assert Echoed(r).backend == moved_to and set_cookie(r) is None, r
    assert_quiescent(sluice)


def test_sticky_custom_cookie_name_and_bad_values(sluice, make_backend):
    """--sticky-cookie lb: the cookie is named lb, and the default name is ignored. A
    request whose lb cookie is garbage or names no backend is served (200) and gets a fresh,
    valid lb cookie that then sticks."""
    bs = [make_backend(echo()) for _ in range(2)]
    sluice.start(bs, args=["--strategy", "sticky", "--sticky-cookie", "lb"])
    r = request(sluice.port, "GET", "/", headers=[("Cookie", "sluice_backend=0000000000000000")])
    assert set_cookie(r, "sluice_backend") is None
    value = set_cookie(r, "lb")
    assert value is not None, r.headers
    for bad in ["nothex", "ffffffffffffffff", "", "0123"]:
        r = request(sluice.port, "GET", "/bad", headers=[("Cookie", f"lb={bad}")])
        assert r.status == 200, r
        fresh = set_cookie(r, "lb")
        assert fresh is not None, f"lb={bad!r}: no new cookie: {r.headers}"
        home = Echoed(r).backend
        for _ in range(4):
            r2 = request(sluice.port, "GET", "/again", headers=[("Cookie", f"lb={fresh}")])
            assert Echoed(r2).backend == home and set_cookie(r2, "lb") is None
    assert_quiescent(sluice)


# ---------------------------------------------------------------------------------------
# Pool sizes


@pytest.mark.time_limit(30)
def test_single_backend_every_strategy(make_sluice, make_backend):
    """A pool of one backend works under every strategy: 30 requests (fresh and kept-alive
    connections, with and without hash keys and cookies) all reach it."""
    only = make_backend(echo())
    for strategy in STRATEGIES:
        s = make_sluice().start([only], args=["--strategy", strategy, "--hash-key", "path"])
        names = [who(s.port, f"/one/{i}") for i in range(10)]
        names += sequence(s.port, 10)
        names += [who(s.port, "/c", [("Cookie", "sluice_backend=00000000000000ff")])
                  for _ in range(10)]
        assert set(names) == {only.name}, (strategy, names)
        assert_quiescent(s)
        s.stop()
    assert len(only.requests) == 30 * len(STRATEGIES)


@pytest.mark.time_limit(40)
def test_sixty_four_backends_round_robin(sluice, make_backend):
    """64 backends (the most a pool took before pools were sized at start-up), round robin,
    --workers 1: 128 sequential requests reach every backend exactly twice."""
    bs = [make_backend(echo()) for _ in range(64)]
    sluice.start(bs)
    names = sequence(sluice.port, 128)
    assert Counter(names) == {b.name: 2 for b in bs}, Counter(names)
    assert all(len(b.requests) == 2 for b in bs)
    assert_quiescent(sluice)


# ---------------------------------------------------------------------------------------
# max-conns


def _parallel(port, n, target="/mc", timeout=8.0, stagger=None):
    """n GETs at once, each on its own connection. Returns the responses in start order.
    `stagger(i)` (optional) is called before starting request i (e.g. to wait for the
    previous one to reach a backend)."""
    results = [None] * n

    def one(i):
        try:
            results[i] = request(port, "GET", f"{target}/{i}", timeout=timeout)
        except Exception as e:  # noqa: BLE001 - asserted by the caller
            results[i] = e

    threads = []
    for i in range(n):
        if stagger:
            stagger(i)
        t = threading.Thread(target=one, args=(i,), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join(timeout + 2)
    return results


@pytest.mark.time_limit(20)
def test_max_conns_spills_to_the_other_backend(sluice, make_backend):
    """Backend A with max-conns=1 is slow (600 ms), B is fast: 4 concurrent requests all
    get 200, and A takes at most one of them (its one connection is busy the whole time),
    having accepted one connection only."""
    a = make_backend(slow_head(0.6), name="A")
    b = make_backend(echo(), name="B")
    sluice.start([f"{a.address},max-conns=1", b])
    results = _parallel(sluice.port, 4)
    for r in results:
        assert not isinstance(r, Exception) and r.status == 200, results
    names = Counter(Echoed(r).backend for r in results)
    assert names["A"] <= 1 and names["B"] >= 3, names
    assert a.connections <= 1
    assert_quiescent(sluice)


@pytest.mark.time_limit(20)
def test_max_conns_all_at_cap_503(sluice, make_backend):
    """Only backend A, max-conns=1, slow (800 ms): while one request is in flight a
    second one gets an immediate 503 `every backend is at its connection limit` with
    `Connection: close`, and the first still gets its 200. Once the first is done, the
    next request is served again."""
    a = make_backend(slow_head(0.8), name="A")
    sluice.start([f"{a.address},max-conns=1"])
    with Client(sluice.port, timeout=5) as first:
        first.send_request("GET", "/first")
        assert a.wait_for_requests(1, 3.0), "the first request never reached A"
        t0 = time.monotonic()
        with Client(sluice.port, timeout=5) as second:
            r2 = second.request("GET", "/second")
            elapsed = time.monotonic() - t0
            assert r2.status == 503, r2
            assert b"every backend is at its connection limit" in r2.body, r2
            assert "close" in r2.connection_tokens(), r2.headers
            assert second.wait_closed(2.0)
        assert elapsed < 0.5, f"503 took {elapsed:.2f}s"
        r1 = first.read_response()
        assert Echoed(r1).target == "/first"
    assert Echoed(request(sluice.port, "GET", "/third")).target == "/third"
    assert [r.target for r in a.requests] == ["/first", "/third"]
    assert_quiescent(sluice)


@pytest.mark.time_limit(20)
def test_max_conns_is_shared_by_all_workers(sluice, make_backend):
    """max-conns counts connections from all workers together: with --workers 2 and only
    backend A (max-conns=1, 800 ms to answer), while one request is in flight 6 more on
    new client connections (spread over both workers) all get 503 at once, and the first
    gets its 200."""
    a = make_backend(slow_head(0.8), name="A")
    sluice.start([f"{a.address},max-conns=1"], workers=2)
    with Client(sluice.port, timeout=5) as first:
        first.send_request("GET", "/first")
        assert a.wait_for_requests(1, 3.0), "the first request never reached A"
        results = _parallel(sluice.port, 6, "/more", timeout=5)
        for r in results:
            assert not isinstance(r, Exception), results
            assert r.status == 503 and b"connection limit" in r.body, r
        assert Echoed(first.read_response()).target == "/first"
    assert a.connections == 1 and len(a.requests) == 1
    assert_quiescent(sluice)


# ---------------------------------------------------------------------------------------
# No allocations per request, whatever the strategy


def _mixed_load(port, tid, n, errors):
    """n keep-alive GETs with a varying X-User header, path and sticky cookie (so hash and
    sticky both see many keys), plus a few pipelined batches."""
    try:
        with Client(port, timeout=10) as c:
            cookie = None
            done = 0
            while done < n:
                if done % 50 == 45:
                    targets = [f"/pipe/{tid}/{done + j}" for j in range(5)]
                    c.send(b"".join(build_request("GET", t) for t in targets))
                    got = [Echoed(c.read_response()).target for _ in targets]
                    assert got == targets, got
                    done += 5
                    continue
                headers = [("X-User", f"u{tid}-{done % 37}")]
                if cookie and done % 3:
                    headers.append(("Cookie", f"sluice_backend={cookie}"))
                target = f"/load/{tid}/{done}"
                r = c.request("GET", target, headers=headers)
                assert Echoed(r).target == target
                cookie = set_cookie(r) or cookie
                done += 1
    except Exception as e:  # noqa: BLE001 - collected and asserted by the test
        errors.append(f"thread {tid}: {e!r}")


@pytest.mark.time_limit(30)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_no_heap_allocations_per_strategy(sluice, make_backend, strategy):
    """Under each strategy (3 weighted backends, one of them capped with max-conns, hash on
    a header), 2,000 requests over 4 concurrent keep-alive clients leave
    heap_allocations_after_startup at 0, before and after."""
    bs = [make_backend(echo()) for _ in range(3)]
    sluice.start([f"{bs[0].address},weight=2", f"{bs[1].address},max-conns=8", bs[2]],
                 args=["--strategy", strategy, "--hash-key", "header:X-User"])
    before = sluice.stats()
    assert before["heap_allocations_after_startup"] == 0, before
    errors = []
    threads = [threading.Thread(target=_mixed_load, args=(sluice.port, t, 500, errors),
                                daemon=True) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert not any(t.is_alive() for t in threads), "load threads did not finish"
    assert not errors, errors[:3]
    assert sum(len(b.requests) for b in bs) == 2000
    after = assert_quiescent(sluice)
    assert after["heap_allocations_after_startup"] == 0, after
