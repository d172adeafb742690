"""Reload: SIGHUP (or `sluice reload --pid-file`, or the admin listener's `POST /reload`, which
`sluice reload --admin` sends) re-reads the config file. A good file becomes the next
generation (`reloaded ... generation N`) without a failed request; a file with a mistake, or
one that changes a setting only a restart can change, is refused (`reload failed`, with the
same FILE:LINE:COL lines `sluice check` prints) and the old config keeps serving. What did
not change survives a reload: a pool's pooled backend connections, a backend's health state,
a listener's socket.

Listeners and the admin listener are on fixed ports (conftest.free_port) so that the file
says the same thing on every reload.
"""

import collections
import re
import signal
import socket
import subprocess
import threading
import time

import pytest

from backends import echo, health_endpoint, route, slow_head, traffic
from client import Client, ConnectionClosed, Echoed, is_refused, request, wait_until
from conftest import ZonEnum, free_port, write_zon, zon
from test_admin import ADMIN_RE, post_reload, scrape, value
from test_config_docs import check
from test_routing import config, said, says

RELOAD_WAIT = 10.0
FAILED_RE = re.compile(r"reload failed")
RELOADED_RE = re.compile(r"\breloaded\b")
NOPE = '"nope"'  # The pool name no pool has, as written in a file.


# ---------------------------------------------------------------------------------------
# Helpers


def generation_re(n):
    """The line saying generation `n` is serving: `reloaded` and `generation N`."""
    return re.compile(rf"(?=.*\breloaded\b)(?=.*\bgeneration {n}\b)")


def reload(sluice, path, cfg, generation):
    """Write `cfg` to `path`, send SIGHUP and wait for `reloaded ... generation N`."""
    write_zon(path, cfg)
    mark = sluice.mark()
    sluice.signal(signal.SIGHUP)
    return sluice.wait_for_line(generation_re(generation), RELOAD_WAIT, start=mark)


def refused_reload(sluice):
    """Send SIGHUP and wait for `reload failed`; returns that line's index."""
    mark = sluice.mark()
    sluice.signal(signal.SIGHUP)
    idx, _ = sluice.wait_for_line_index(FAILED_RE, RELOAD_WAIT, start=mark)
    return idx


def reload_counts(admin_port):
    """(sluice_config_generation, reloads ok, reloads failed) from /metrics."""
    m = scrape(admin_port)
    return (value(m, "sluice_config_generation"),
            value(m, "sluice_config_reloads_total", result="ok"),
            value(m, "sluice_config_reloads_total", result="failed"))


def run(binary, *args, timeout=10.0):
    """Run a sluice command to completion (bounded): (exit code, stdout + stderr)."""
    try:
        done = subprocess.run([binary, *map(str, args)], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"sluice {' '.join(map(str, args))} did not exit within {timeout}s")
    return done.returncode, done.stdout + done.stderr


def addr(port):
    return f"127.0.0.1:{port}"


def with_admin(sluice, path):
    """Start with `path` (which has an admin section) and return the admin port."""
    sluice.start_config(path)
    return int(sluice.wait_for_line(ADMIN_RE, timeout=5.0).group("port"))


def line_of(text, needle):
    """The 1-based number of the first line of `text` containing `needle`."""
    return next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)


# ---------------------------------------------------------------------------------------
# The pid file and the reload command


def test_pid_file_written_once_listening_and_removed_at_exit(sluice, backend, tmp_path):
    """`--pid-file FILE`: the file holds sluice's pid once it listens, and is gone after a
    clean exit."""
    pid_file = tmp_path / "sluice.pid"
    path = write_zon(tmp_path / "s.zon", config({"app": [backend]}))
    sluice.start_config(path, args=["--pid-file", pid_file])
    assert wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), 3.0), \
        "no pid file"
    assert int(pid_file.read_text().strip()) == sluice.pid
    assert Echoed(request(sluice.port, "GET", "/p")).target == "/p"
    assert sluice.stop() == 0
    assert not pid_file.exists(), "the pid file outlived a clean exit"


def test_reload_command_signals_the_pid_in_the_pid_file(sluice, backend, tmp_path):
    """`sluice reload --pid-file FILE` sends SIGHUP to that pid, waits for the outcome and
    prints it, exit 0; the new file then serves."""
    pid_file = tmp_path / "sluice.pid"
    port = free_port()
    path = write_zon(tmp_path / "s.zon", config({"app": [backend]}, listen=addr(port)))
    sluice.start_config(path, args=["--pid-file", pid_file])
    assert wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), 3.0)
    write_zon(path, config({"app": [backend]}, [says("new", path_prefix="/new"),
                                                {"pool": "app"}], listen=addr(port)))
    code, out = run(sluice.binary, "reload", "--pid-file", pid_file)
    assert code == 0, out
    assert re.search(r"^reloaded .*: generation 2 \(", out, re.M), out
    # Applied before the command returned: no waiting for the log.
    assert said(request(port, "GET", "/new")) == "new"


def test_reload_command_with_a_pid_file_exits_1_with_the_reason_when_refused(sluice, backend,
                                                                             tmp_path):
    """Issue 19: `sluice reload --pid-file` used to say `sent SIGHUP` and exit 0 whatever
    happened. A file with a mistake: exit 1 and the reason (FILE:LINE:COL, `still serving`),
    as `--admin` prints it; the old configuration keeps serving. Then a good file: exit 0.
    During a drain: exit 1, `draining`. After the exit, the outcome file is gone with the pid
    file."""
    pid_file = tmp_path / "sluice.pid"
    port = free_port()
    path = write_zon(tmp_path / "s.zon", config({"app": [backend]}, listen=addr(port)))
    sluice.start_config(path, args=["--pid-file", pid_file])
    assert wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), 3.0)
    broken = zon(config({"app": [backend]}, [{"pool": "nope"}], listen=addr(port)))
    path.write_text(broken + "\n")
    code, out = run(sluice.binary, "reload", "--pid-file", pid_file)
    assert code == 1, out
    assert f"{path}:{line_of(broken, NOPE)}:" in out, out
    assert "still serving generation 1" in out, out
    assert Echoed(request(port, "GET", "/still")).target == "/still"
    write_zon(path, config({"app": [backend]}, [says("fixed", path_prefix="/fixed"),
                                                {"pool": "app"}], listen=addr(port)))
    code, out = run(sluice.binary, "reload", "--pid-file", pid_file)
    assert code == 0 and "generation 2" in out, out
    assert said(request(port, "GET", "/fixed")) == "fixed"
    outcome = pid_file.with_name(pid_file.name + ".reload")
    assert outcome.read_text().startswith("started_ns="), outcome.read_text()
    assert sluice.stop() == 0
    assert not pid_file.exists() and not outcome.exists()


@pytest.mark.time_limit(30)
def test_reload_command_during_a_drain_is_refused_with_the_reason(sluice, make_backend, tmp_path):
    """A SIGHUP while sluice drains is refused, and `sluice reload --pid-file` says so (exit 1)
    instead of waiting for an outcome that never comes."""
    slow = make_backend(slow_head(3.0))
    pid_file = tmp_path / "sluice.pid"
    path = write_zon(tmp_path / "s.zon", config({"app": [slow]}))
    sluice.start_config(path, args=["--pid-file", pid_file])
    assert wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), 3.0)
    holder = threading.Thread(target=lambda: request(sluice.port, "GET", "/slow", timeout=10),
                              daemon=True)
    holder.start()
    assert slow.wait_for_requests(1, 3.0)
    sluice.signal(signal.SIGTERM)
    sluice.wait_for_line(r"SIGTERM: draining", timeout=3.0)
    code, out = run(sluice.binary, "reload", "--pid-file", pid_file)
    assert code == 1 and "draining" in out, out
    holder.join(10)
    assert sluice.wait(5.0) == 0


@pytest.mark.parametrize("content", [None, "", "not a pid\n", "12ab\n"],
                         ids=["missing", "empty", "garbage", "trailing-garbage"])
def test_reload_command_without_a_usable_pid_file(sluice_bin, tmp_path, content):
    """`sluice reload --pid-file FILE` with no such file, or one that does not hold a pid:
    exit 1 with a message (and no signal sent anywhere)."""
    pid_file = tmp_path / "sluice.pid"
    if content is not None:
        pid_file.write_text(content)
    code, out = run(sluice_bin, "reload", "--pid-file", pid_file)
    assert code == 1, (code, out)
    assert out.strip(), "no message"


# ---------------------------------------------------------------------------------------
# SIGHUP


def test_sighup_applies_the_new_file(sluice, make_backend, tmp_path):
    """SIGHUP re-reads the file: a pool and routes added by the first reload serve
    (generation 2), and are gone after the second (generation 3); /metrics counts the
    generation and the reloads."""
    a, b = make_backend(echo(), name="A"), make_backend(echo(), name="B")
    port, admin = free_port(), free_port()
    top = {"listen": addr(port), "admin": {"listen": addr(admin)}}
    first = config({"app": [a]}, [{"pool": "app"}], **top)
    second = config({"app": [a], "web": [b]}, [
        {"path_prefix": "/web/", "pool": "web"},
        says("pong", path_prefix="/ping"),
        {"pool": "app"},
    ], **top)
    path = write_zon(tmp_path / "reload.zon", first)
    admin_port = with_admin(sluice, path)
    assert admin_port == admin and reload_counts(admin_port) == (1, 0, 0)
    assert Echoed(request(port, "GET", "/web/1")).backend == "A"
    assert Echoed(request(port, "GET", "/ping")).backend == "A"

    reload(sluice, path, second, 2)
    assert Echoed(request(port, "GET", "/web/2")).backend == "B"
    assert said(request(port, "GET", "/ping")) == "pong"
    assert Echoed(request(port, "GET", "/other")).backend == "A"
    assert reload_counts(admin_port) == (2, 1, 0)

    reload(sluice, path, first, 3)
    assert Echoed(request(port, "GET", "/web/3")).backend == "A"
    assert Echoed(request(port, "GET", "/ping")).backend == "A"
    assert reload_counts(admin_port) == (3, 2, 0)
    assert not sluice.log_lines(FAILED_RE), sluice.stderr_text()


@pytest.mark.parametrize("kind", ["invalid", "syntax"])
def test_reload_with_a_mistake_keeps_the_old_config(sluice, backend, tmp_path, kind):
    """A file with mistakes (a pool that does not exist and an uppercase host; or a syntax
    error): `reload failed` is logged with the FILE:LINE:COL lines `sluice check` prints for
    that file, the old config keeps serving, the generation stays 1 and the failed reload is
    counted. Fixing the file and reloading again gives generation 2."""
    port, admin = free_port(), free_port()
    top = {"listen": addr(port), "admin": {"listen": addr(admin)}}
    path = write_zon(tmp_path / "reload.zon", config({"app": [backend]}, [{"pool": "app"}],
                                                      **top))
    admin_port = with_admin(sluice, path)
    fixed = config({"app": [backend]}, [says("new", path_prefix="/new"), {"pool": "app"}],
                   **top)
    if kind == "invalid":
        broken = zon(config({"app": [backend]}, [
            says("new", path_prefix="/new"),
            {"host": "Upper.Example", "pool": "app"},
            {"pool": "nope"},
        ], **top))
    else:
        broken = zon(fixed).replace('"/new"', '"/new" "/newer"', 1)
    path.write_text(broken + "\n")
    code, out, err = check(sluice.binary, path)
    problems = err.splitlines()
    assert code == 1 and problems, (code, out, err)
    assert all(p.startswith(f"{path}:") for p in problems), err
    if kind == "invalid":
        assert len(problems) >= 2, err

    mark = sluice.mark()
    idx = refused_reload(sluice)
    for p in problems:
        sluice.wait_for_line(re.escape(p), 3.0, start=idx)
    assert Echoed(request(port, "GET", "/new")).target == "/new", "the old config serves"
    assert reload_counts(admin_port) == (1, 0, 1)
    assert not sluice.log_lines(RELOADED_RE, start=mark), sluice.stderr_text()

    reload(sluice, path, fixed, 2)
    assert said(request(port, "GET", "/new")) == "new"
    assert reload_counts(admin_port) == (2, 1, 1)


def _other_io(io):
    return "uring" if io == "epoll" else "epoll"


RESTART_ONLY = [
    ("workers", {"workers": 2}, r"workers"),
    ("io", None, r"\bio\b"),
    ("limits.max_connections", {"limits": {"max_connections": 100}}, r"max_connections"),
    ("limits.header_bytes_max", {"limits": {"header_bytes_max": "32KiB"}}, r"header_bytes_max"),
    ("timeouts.client_header", {"timeouts": {"client_header": "5s"}}, r"client_header"),
    ("timeouts.client_idle", {"timeouts": {"client_idle": "30s"}}, r"client_idle"),
    ("timeouts.drain", {"timeouts": {"drain": "3s"}}, r"drain"),
    ("trusted_proxies", {"trusted_proxies": ["10.0.0.0/8"]}, r"trusted_proxies"),
    ("admin", {"admin": {"listen": "127.0.0.1:0"}}, r"admin"),
    ("access_log", {"access_log": {"target": "stdout"}}, r"access_log"),
]


@pytest.mark.parametrize("setting,change,name_re", RESTART_ONLY,
                         ids=[s for s, _, _ in RESTART_ONLY])
def test_a_setting_that_needs_a_restart_is_refused(sluice, backend, tmp_path, io, setting,
                                                   change, name_re):
    """A reload that changes a setting only a restart can apply is refused: `reload failed`
    and the setting's name are logged, and the old config keeps serving (the route the same
    file adds is not there). Workers and I/O mode come from the file here, not from flags,
    which would override the file's values."""
    port = free_port()
    top = {"listen": addr(port), "workers": 1, "io": ZonEnum(io)}
    path = write_zon(tmp_path / "reload.zon", config({"app": [backend]}, [{"pool": "app"}],
                                                      **top))
    sluice.start_config(path, workers=None, io_flag=False)
    assert Echoed(request(port, "GET", "/before")).target == "/before"
    top.update(change if change is not None else {"io": ZonEnum(_other_io(io))})
    write_zon(path, config({"app": [backend]}, [says("new", path_prefix="/new"),
                                                {"pool": "app"}], **top))
    mark = sluice.mark()
    idx = refused_reload(sluice)
    sluice.wait_for_line(name_re, 3.0, start=idx)
    assert Echoed(request(port, "GET", "/new")).target == "/new", "the old config serves"
    assert not sluice.log_lines(RELOADED_RE, start=mark), sluice.stderr_text()
    assert sluice.running()


# ---------------------------------------------------------------------------------------
# The admin listener's POST /reload and `sluice reload --admin`


def test_admin_reload_and_reload_command_with_admin(sluice, backend, tmp_path):
    """`POST /reload` on the admin listener applies the file and answers 200 with the new
    generation; `sluice reload --admin ADDR` does the same and prints it, exit 0. With a
    mistake in the file: 422 with the problem (FILE:LINE:...) and exit 1, and the config
    of generation 3 keeps serving."""
    port, admin = free_port(), free_port()
    top = {"listen": addr(port), "admin": {"listen": addr(admin)}}

    def with_route(name):
        return config({"app": [backend]}, [says(name, path_prefix=f"/{name}"),
                                           {"pool": "app"}], **top)

    path = write_zon(tmp_path / "reload.zon", config({"app": [backend]}, **top))
    admin_port = with_admin(sluice, path)

    write_zon(path, with_route("two"))
    r = post_reload(admin_port, timeout=RELOAD_WAIT)
    assert r.status == 200, r
    assert re.search(r"\bgeneration 2\b", r.body.decode()), r
    assert said(request(port, "GET", "/two")) == "two"

    write_zon(path, with_route("three"))
    code, out = run(sluice.binary, "reload", "--admin", addr(admin_port))
    assert code == 0, out
    assert re.search(r"\bgeneration 3\b", out), out
    assert said(request(port, "GET", "/three")) == "three"

    broken = zon(config({"app": [backend]}, [says("four", path_prefix="/four"),
                                             {"pool": "nope"}], **top))
    path.write_text(broken + "\n")
    where = f"{path}:{line_of(broken, NOPE)}:"
    r = post_reload(admin_port, timeout=RELOAD_WAIT)
    assert r.status == 422, r
    assert where in r.body.decode(), (where, r)
    code, out = run(sluice.binary, "reload", "--admin", addr(admin_port))
    assert code == 1, out
    assert where in out, (where, out)

    assert said(request(port, "GET", "/three")) == "three"
    assert Echoed(request(port, "GET", "/four")).target == "/four"
    assert reload_counts(admin_port) == (3, 2, 2)


# ---------------------------------------------------------------------------------------
# Reloads under traffic


class SteadyLoad:
    """`threads` clients sending sequential GETs through sluice until .stop(): on a
    keep-alive connection, and every `fresh_every`-th request on a new one. One target in
    four is under /fixed/, a path some configs answer themselves with `fixed`."""

    def __init__(self, port, threads=4, fresh_every=10):
        self.port, self.fresh_every = port, fresh_every
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.done = 0
        self.failures = []
        self.fixed_local = 0
        self.fixed_proxied = 0
        self.closed_by_sluice = 0
        self.by_backend = collections.Counter()
        self.threads = [threading.Thread(target=self._run, args=(i,), daemon=True)
                        for i in range(threads)]

    def start(self):
        for t in self.threads:
            t.start()
        return self

    def count(self):
        with self.lock:
            return self.done

    def stop(self, timeout=15.0):
        self.stopping.set()
        for t in self.threads:
            t.join(timeout)
        assert not any(t.is_alive() for t in self.threads), "client threads did not finish"

    def _run(self, tid):
        c, i = None, 0
        while not self.stopping.is_set():
            target = f"/fixed/{tid}/{i}" if i % 4 == 0 else f"/load/{tid}/{i}"
            fresh = i % self.fresh_every == self.fresh_every - 1
            try:
                if fresh:
                    r = request(self.port, "GET", target, timeout=10)
                else:
                    if c is None:
                        c = Client(self.port, timeout=10)
                    r = c.request("GET", target)
                    if "close" in r.connection_tokens():
                        c.close()
                        c = None
                        with self.lock:
                            self.closed_by_sluice += 1
                self._record(tid, i, target, r)
            except Exception as e:  # noqa: BLE001 - collected and asserted by the test
                how = "fresh" if fresh else "keep-alive"
                with self.lock:
                    self.failures.append(f"client {tid} request {i} {target} ({how}): {e!r}")
                if c is not None:
                    c.close()
                    c = None
            i += 1
        if c is not None:
            c.close()

    def _record(self, tid, i, target, r):
        with self.lock:
            self.done += 1
            if target.startswith("/fixed/") and r.status == 200 and r.body == b"fixed\n":
                self.fixed_local += 1
                return
            try:
                e = Echoed(r)
                assert e.target == target, (e.target, target)
            except (AssertionError, ValueError) as err:
                self.failures.append(f"client {tid} request {i} {target}: {err!r} {r!r}")
                return
            self.by_backend[e.backend] += 1
            if target.startswith("/fixed/"):
                self.fixed_proxied += 1


@pytest.mark.time_limit(60)
def test_twenty_reloads_under_steady_traffic(sluice, make_backend, tmp_path):
    """4 clients send requests back to back (keep-alive, and every 10th on a new
    connection) while the file alternates between two configs and is reloaded 20 times:
    (odd generations) two backends of equal weight; (even) weights 3 and 1, a third backend
    and a route answering /fixed/ itself. Every request gets a complete 200 (echoed by a
    backend, or `fixed`), none is reset or times out; generation 21 is reached with 20
    reloads counted; once the clients close, no connection is left and no heap allocation
    was made after start-up (the exit line says 0)."""
    b1, b2, b3 = (make_backend(echo(), name=n) for n in ("b1", "b2", "b3"))
    port, admin = free_port(), free_port()
    top = {"listen": addr(port), "admin": {"listen": addr(admin)}}

    def variant(generation):
        if generation % 2:
            backends = [{"address": b1.address, "weight": 1},
                        {"address": b2.address, "weight": 1}]
            routes = [{"pool": "app"}]
        else:
            backends = [{"address": b1.address, "weight": 3},
                        {"address": b2.address, "weight": 1}, b3.address]
            routes = [{"path_prefix": "/fixed/", "respond": {
                "content_type": "text/plain", "body": "fixed\n"}}, {"pool": "app"}]
        pool = {"backends": backends, "strategy": ZonEnum("weighted")}
        return config({"app": pool}, routes, **top)

    path = write_zon(tmp_path / "reload.zon", variant(1))
    admin_port = with_admin(sluice, path)
    load = SteadyLoad(port).start()
    try:
        assert wait_until(lambda: load.count() >= 20, 10.0), "no traffic got through"
        for generation in range(2, 22):
            before = load.count()
            time.sleep(0.1)  # Pacing: reloads about 100-150 ms apart, traffic in between.
            assert wait_until(lambda: load.count() >= before + 4, 10.0), \
                f"traffic stalled before generation {generation}: {load.failures[:3]}"
            reload(sluice, path, variant(generation), generation)
        after = load.count()
        assert wait_until(lambda: load.count() >= after + 20, 10.0), "traffic stalled"
    finally:
        load.stop()
    print(f"{load.done} requests: {dict(load.by_backend)}, /fixed/ answered by sluice "
          f"{load.fixed_local}, proxied {load.fixed_proxied}; keep-alive connections closed "
          f"by sluice: {load.closed_by_sluice}")
    assert load.failures == [], f"{len(load.failures)} failures: {load.failures[:5]}"
    assert load.fixed_local > 0 and load.fixed_proxied > 0, "both variants served"
    assert all(load.by_backend[n] > 0 for n in ("b1", "b2", "b3")), load.by_backend
    assert reload_counts(admin_port) == (21, 20, 0)
    assert not sluice.log_lines(FAILED_RE), sluice.stderr_text()
    for b in (b1, b2, b3):
        assert b.errors == [] and b.exceptions == [], (b, b.errors, b.exceptions)

    assert wait_until(lambda: (lambda st: st["connections_active"] == 0
                               and st["upstream_requests_in_flight"] == 0)(sluice.stats()),
                      5.0, interval=0.05), sluice.stats()
    stats_allocations = sluice.stats()["heap_allocations_after_startup"]
    assert sluice.stop(timeout=10.0) == 0
    assert sluice.exit_allocations() == 0, \
        f"exit line: {sluice.exit_allocations()} heap allocations after start-up " \
        f"(stats line before exit: {stats_allocations})"
    assert stats_allocations == 0


def test_stats_line_and_metrics_count_the_current_generation(sluice, make_backend, tmp_path):
    """The stats line and /metrics come from one collector over one scope, the current
    generation's pools: while a request is still in flight on the instance of a pool a reload
    rebuilt (finishing for generation 1), neither counts it or its connection, and both show the
    new instance's backends. (The stats line used to count the old instance and /metrics not.)"""
    slow, b = make_backend(slow_head(3.0), name="slow"), make_backend(echo(), name="B")
    port, admin = free_port(), free_port()
    top = {"listen": addr(port), "admin": {"listen": addr(admin)}}
    first = config({"app": [slow]}, [{"pool": "app"}], **top)
    # A changed policy (not only members, which would change in place): a new instance.
    second = config({"app": {"backends": [slow.address, b.address],
                             "strategy": ZonEnum("random")}}, [{"pool": "app"}], **top)
    path = write_zon(tmp_path / "reload.zon", first)
    admin_port = with_admin(sluice, path)
    answers = []
    client = threading.Thread(target=lambda: answers.append(
        request(port, "GET", "/slow", timeout=10.0)))
    client.start()
    try:
        assert wait_until(lambda: sluice.stats()["upstream_requests_in_flight"] == 1, 2.0)
        reload(sluice, path, second, 2)
        st = sluice.stats()
        m = scrape(admin_port)
    finally:
        client.join(timeout=10.0)

    def total(name):
        return sum(v for n, _, v in m[name]["samples"] if n == name)

    assert answers and answers[0].status == 200, answers  # Finished on the old instance.
    assert st["config_generation"] == 2
    assert st["upstream_requests_in_flight"] == total("sluice_upstream_requests_in_flight") == 0, st
    assert st["upstream_connections_open"] == total("sluice_upstream_connections_open") == 0, st
    assert st["backends_available"] == total("sluice_backends_available") == 2, st


def test_unchanged_pool_keeps_its_backend_connections(sluice, make_backend, tmp_path):
    """A reload that changes only a route keeps the pool and its pooled backend connection:
    sequential requests on a keep-alive client before and after, and on a new client after,
    reach the backend without a new TCP connection."""
    b = make_backend(echo(), name="B")
    port = free_port()
    path = write_zon(tmp_path / "reload.zon",
                     config({"app": [b]}, [{"pool": "app"}], listen=addr(port)))
    sluice.start_config(path)
    with Client(port) as c:
        for i in range(5):
            assert Echoed(c.request("GET", f"/before/{i}")).target == f"/before/{i}"
        connections = b.connections
        assert connections >= 1
        reload(sluice, path, config({"app": [b]}, [says("other", path_prefix="/other"),
                                                   {"pool": "app"}], listen=addr(port)), 2)
        for i in range(5):
            assert Echoed(c.request("GET", f"/after/{i}")).target == f"/after/{i}"
        with Client(port) as fresh:
            assert said(fresh.request("GET", "/other")) == "other"
            for i in range(5):
                assert Echoed(fresh.request("GET", f"/fresh/{i}")).target == f"/fresh/{i}"
    assert b.connections == connections, \
        f"{b.connections - connections} new backend connections across a route-only reload"
    assert len(b.requests) == 15


@pytest.mark.time_limit(30)
def test_unchanged_backend_keeps_its_health_state(sluice, make_backend, tmp_path):
    """Active checks (500 ms, fall 2) mark `bad` down. A reload that changes another pool
    and adds a route keeps that state: right after it, no request reaches `bad` (backends
    start healthy, so a reset state would send it half the traffic until two more failed
    checks), and it is not marked down a second time while its checks go on failing."""
    hg, hb = health_endpoint(), health_endpoint(status=503)
    good, bad = make_backend(hg, name="good"), make_backend(hb, name="bad")
    side1, side2 = make_backend(echo(), name="side1"), make_backend(echo(), name="side2")
    port = free_port()
    health = {"path": "/health", "interval": "500ms", "timeout": "400ms", "fall": 2,
              "rise": 2}

    def cfg(side_backends, extra_routes=()):
        return config({"app": {"backends": [good.address, bad.address], "health": health},
                       "side": side_backends},
                      [*extra_routes, {"path_prefix": "/side/", "pool": "side"},
                       {"pool": "app"}], listen=addr(port))

    path = write_zon(tmp_path / "reload.zon", cfg([side1]))
    sluice.start_config(path)
    down_re = rf"^sluice: warn: backend {re.escape(bad.address)} is down: active check failed"
    sluice.wait_for_line(down_re, timeout=10.0)
    names = [Echoed(request(port, "GET", f"/before/{i}")).backend for i in range(6)]
    assert set(names) == {"good"}, names
    before = len(traffic(bad))

    reload(sluice, path, cfg([side1, side2], [says("new", path_prefix="/new")]), 2)
    names = [Echoed(request(port, "GET", f"/after/{i}")).backend for i in range(20)]
    assert set(names) == {"good"}, names
    assert len(traffic(bad)) == before, "a backend down before the reload got requests"
    assert said(request(port, "GET", "/new")) == "new"
    assert {Echoed(request(port, "GET", f"/side/{i}")).backend for i in range(4)} == \
        {"side1", "side2"}

    probes = hb.probes
    assert wait_until(lambda: hb.probes >= probes + 3, 5.0), "active checks stopped"
    assert len(sluice.log_lines(down_re)) == 1, sluice.stderr_text()
    assert not sluice.log_lines(rf"backend {re.escape(bad.address)} is up")
    names = [Echoed(request(port, "GET", f"/later/{i}")).backend for i in range(10)]
    assert set(names) == {"good"}, names
    assert len(traffic(bad)) == before


@pytest.mark.time_limit(40)
def test_listener_added_and_removed_by_reload(sluice, make_backend, tmp_path):
    """A listener added by a reload prints its `listening on` line and serves (with a route
    restricted to it); removed by the next reload, its port refuses new connections while
    the other listener is unaffected, and a request in flight on the removed listener still
    gets its response; the next request there gets a response or a clean close."""
    b = make_backend(route({"/slow": slow_head(1.0)}), name="B")
    p1, p2 = free_port(), free_port()
    main = {"name": "main", "listen": addr(p1)}
    one = config({"app": [b]}, [{"pool": "app"}], listeners=[main])
    two = config({"app": [b]}, [says("extra", listeners=["extra"], path_prefix="/where"),
                                {"pool": "app"}],
                 listeners=[main, {"name": "extra", "listen": addr(p2)}])
    path = write_zon(tmp_path / "reload.zon", one)
    sluice.start_config(path)
    assert sluice.port == p1
    assert is_refused(p2)

    mark = sluice.mark()
    reload(sluice, path, two, 2)
    sluice.wait_for_line(rf"^sluice: listening on 127\.0\.0\.1:{p2}\b", 5.0, start=mark)
    assert said(request(p2, "GET", "/where")) == "extra"
    assert Echoed(request(p1, "GET", "/where")).target == "/where"

    with Client(p2, timeout=10) as keep, Client(p1, timeout=10) as other:
        assert Echoed(keep.request("GET", "/k/1")).target == "/k/1"
        assert Echoed(other.request("GET", "/o/1")).target == "/o/1"
        keep.send_request("GET", "/slow/in-flight")
        assert b.wait_for(lambda: "/slow/in-flight" in b.targets(), 5.0)

        reload(sluice, path, one, 3)
        assert wait_until(lambda: is_refused(p2, 0.5), 3.0, interval=0.05), \
            "the removed listener still accepts connections"
        assert Echoed(other.request("GET", "/o/2")).target == "/o/2"
        assert Echoed(request(p1, "GET", "/o/3")).target == "/o/3"

        r = keep.read_response(timeout=10)
        assert Echoed(r).target == "/slow/in-flight", r
        if "close" in r.connection_tokens():
            assert keep.wait_closed(3.0) and not keep.bsock.reset, "not a clean close"
        else:
            try:
                nxt = keep.request("GET", "/k/2")
            except ConnectionClosed as e:
                assert e.partial == b"", f"a partial response: {e.partial!r}"
            except (BrokenPipeError, ConnectionResetError):
                pass  # Closed before the request was written: a close, not a lost answer.
            else:
                assert Echoed(nxt).target == "/k/2", nxt
        assert Echoed(other.request("GET", "/o/4")).target == "/o/4"
    assert is_refused(p2)


@pytest.mark.parametrize("holder", ["socket", "sluice"])
def test_reload_adding_an_address_in_use_is_refused(sluice, make_sluice, make_backend,
                                                     tmp_path, holder):
    """A reload that adds a listener on an address another process listens on (a plain
    socket, or a second sluice with its SO_REUSEPORT sockets) is refused with a line naming
    the address; the old generation keeps serving, nothing joins the other process's port,
    and once the port is free the same file applies."""
    b = make_backend(name="B")
    p1, p2 = free_port(), free_port()
    main = {"name": "main", "listen": addr(p1)}
    one = config({"app": [b]}, [{"pool": "app"}], listeners=[main])
    two = config({"app": [b]}, [{"pool": "app"}],
                 listeners=[main, {"name": "extra", "listen": addr(p2)}])
    path = write_zon(tmp_path / "reload.zon", one)
    sluice.start_config(path, workers=2)

    other = make_backend(name="other")
    if holder == "socket":
        taken = socket.socket()
        taken.bind(("127.0.0.1", p2))
        taken.listen()
    else:
        taken = make_sluice().start([other], workers=2, listen=addr(p2))
    write_zon(path, two)
    idx = refused_reload(sluice)
    wanted = f"reload failed: cannot listen on 127.0.0.1:{p2}: address already in use"
    assert wanted in sluice.lines[idx], sluice.stderr_text()
    sluice.wait_for_line(r"reload failed: still serving generation 1", 3.0, start=idx)
    assert Echoed(request(p1, "GET", "/still")).target == "/still"
    if holder == "sluice":
        for i in range(10):
            assert Echoed(request(p2, "GET", f"/theirs/{i}")).backend == "other"
        assert not [t for t in b.targets() if t.startswith("/theirs/")]

    if holder == "socket":
        taken.close()
    else:
        assert taken.stop() == 0
    reload(sluice, path, two, 2)
    assert Echoed(request(p2, "GET", "/mine")).backend == "B"


def test_counters_go_on_across_reloads_and_count_late_requests_once(sluice, make_backend, tmp_path):
    """The soak's findings: `sluice_route_requests_total` restarted at every reload even with
    the routes unchanged; `sluice_ejections_total` restarted when a pool's weights changed;
    what requests counted on the old instance of a changed pool after the reload was lost
    from `/metrics` (the retries counter ran short of the log's `tries:2` lines). Now a
    route's count goes on by its label, a changed pool's counts carry over to its new
    instance, and what the old instance counts after the reload moves over once it is let go
    of: every request is counted once."""
    from backends import reset
    slow, good, bad = (make_backend(slow_head(1.5), name="slow"), make_backend(echo(), name="good"),
                       make_backend(reset(), name="bad"))
    port, admin = free_port(), free_port()
    top = {"listen": addr(port), "admin": {"listen": addr(admin)}}

    def cfg(weight, keepalive):
        app = {"backends": [good.address, {"address": bad.address, "weight": weight}],
               "ejection": {"after": 1, "time": "30s", "max_percent": 100}}
        late = {"backends": [slow.address], "keepalive": keepalive}
        return config({"app": app, "late": late},
                      [{"name": "api", "path_prefix": "/api", "pool": "app"},
                       {"path_prefix": "/late", "pool": "late"}, {"pool": "app"}], **top)

    path = write_zon(tmp_path / "reload.zon", cfg(1, 64))
    admin_port = with_admin(sluice, path)
    # Round robin over good and bad: bad resets, the GET is retried on good, bad is ejected.
    for i in range(4):
        assert request(port, "GET", f"/api/{i}").status == 200
    m = scrape(admin_port)
    assert value(m, "sluice_ejections_total", pool="app") == 1
    retries = value(m, "sluice_retries_total", pool="app")
    assert retries >= 1
    # A request to the slow backend is in flight across a reload that changes both pools:
    # its response head, and so its response count, come after the reload.
    late = []
    client = threading.Thread(target=lambda: late.append(request(port, "GET", "/late", timeout=10.0)))
    client.start()
    try:
        assert wait_until(lambda: sluice.stats()["upstream_requests_in_flight"] == 1, 3.0)
        reload(sluice, path, cfg(2, 32), 2)
        m = scrape(admin_port)
        assert value(m, "sluice_route_requests_total", route="api") == 4
        assert value(m, "sluice_ejections_total", pool="app") == 1
        assert value(m, "sluice_retries_total", pool="app") == retries
    finally:
        client.join(timeout=10.0)
    assert late and late[0].status == 200, late
    # Once the late request is done the old generation is let go of, and its response is in
    # the new instance's counts, once.
    assert wait_until(lambda: value(scrape(admin_port), "sluice_responses_total", pool="late", **{"class": "2xx"}) == 1, 5.0), \
        scrape(admin_port)["sluice_responses_total"]
    m = scrape(admin_port)
    assert value(m, "sluice_requests_total", pool="late") == 1
    assert value(m, "sluice_route_requests_total", route="1") == 1
    reload(sluice, path, cfg(2, 32), 3)  # Unchanged: the same instances, the same counts.
    assert request(port, "GET", "/api/again").status == 200
    m = scrape(admin_port)
    assert value(m, "sluice_route_requests_total", route="api") == 5
    assert value(m, "sluice_responses_total", pool="late", **{"class": "2xx"}) == 1
    assert value(m, "sluice_ejections_total", pool="app") == 1


def test_a_listener_given_its_bound_port_keeps_its_socket(sluice, make_backend, tmp_path):
    """A file listening on `127.0.0.1:0`, reloaded naming the port it got: the same socket
    serves on (`0 opened`), so nothing waiting in its accept queue is reset, and requests made
    in a loop across the reload are all answered."""
    backend = make_backend()
    path = tmp_path / "site.zon"
    cfg = {"listen": "127.0.0.1:0", "pools": {"app": {"backends": [backend.address]}}}
    write_zon(path, cfg)
    sluice.start_config(path, workers=2)
    cfg["listen"] = f"127.0.0.1:{sluice.port}"
    stop = threading.Event()
    answered, failed = [], []

    def load():
        while not stop.is_set():
            try:
                answered.append(request(sluice.port, "GET", "/during").status)
            except (OSError, ConnectionClosed) as e:
                failed.append(repr(e))
    worker = threading.Thread(target=load)
    worker.start()
    try:
        line = reload(sluice, path, cfg, 2)
        time.sleep(0.3)
    finally:
        stop.set()
        worker.join()
    assert "1 listeners, 0 opened" in line.string, line.string
    assert failed == [] and answered and set(answered) == {200}, (failed, collections.Counter(answered))
