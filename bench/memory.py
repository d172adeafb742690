#!/usr/bin/env python3
"""Memory driver for bench/memory.sh (Python 3 stdlib only).

Per proxy (sluice, nginx, HAProxy), started afresh each round:

1. idle: started, no traffic at all (readiness is read from /proc/net/tcp and sluice's
   `listening on` line, never by connecting), MEMORY_IDLE_WAIT seconds, then per process
   VmRSS/RssAnon/RssFile (/proc/PID/status) and Pss (/proc/PID/smaps_rollup).
2. connections: MEMORY_CONNECTIONS client sockets opened by this process (non-blocking,
   epoll, MEMORY_CONCURRENCY connects/exchanges in flight), one keep-alive
   `GET / HTTP/1.1` on each, response read in full (200 `hello\\n` checked). The connection
   is then left open and idle. RSS is read right after the last response ("hot"), and again
   after MEMORY_SETTLE seconds of idleness ("settled"; sluice returns an idle connection's
   buffer to its pool after one second). The proxy's established sockets on its port are
   counted with `ss`, and every client socket is checked still open (no EOF or reset).
3. closed: all client sockets closed (RST, so no TIME_WAIT piles up), RSS read once more.

Memory per idle connection = (settled − idle) / connections, for the sum over the proxy's
processes (nginx: master + worker) and for the worker process alone. RSS is user memory:
the kernel's socket structures and buffers are not in it (see /proc/net/sockstat, printed).

It is a measurement, not a test: exits non-zero only when the harness breaks (the backend
does not start, a proxy's processes cannot be stopped, the fd limit is too low for the
requested connections).

Usage: memory.py --sluice BIN --nginx BIN --haproxy BIN --run-dir DIR --report FILE.md
                 [--info TEXT]... [--command TEXT]
Knobs come from the environment; bench/memory.sh --help lists them.
"""

import errno
import math
import os
import re
import resource
import select
import signal
import socket
import ssl
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402 - next to this file
from benchlib import HarnessError, env_float, env_int, started, stop_tree  # noqa: E402

note = benchlib.make_note("memory")
med = benchlib.median


# --- processes -------------------------------------------------------------------------

def listening(port):
    """Is something LISTENing on 127.0.0.1:port? Read from /proc, without connecting."""
    want = f"0100007F:{port:04X}"
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            if fields[1] == want and fields[3] == "0A":
                return True
    return False


# --- memory of a process tree ----------------------------------------------------------

def proc_mem(pid):
    """KiB figures of one process: VmRSS, RssAnon, RssFile, RssShmem, Pss, Pss_Anon."""
    out = {"pid": pid}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("Name", "VmRSS", "RssAnon", "RssFile", "RssShmem", "Threads"):
                v = rest.split()
                out[key] = v[0] if key == "Name" else int(v[0])
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("Pss", "Pss_Anon", "Pss_File"):
                    out[key] = int(rest.split()[0])
    except OSError:
        pass
    return out


def tree_mem(pid, worker_pick):
    """Per process, the sum, and the worker: `worker_pick(pids)` names it."""
    pids = benchlib.tree(pid)
    procs = [proc_mem(p) for p in pids]
    total = {k: sum(p.get(k, 0) for p in procs)
             for k in ("VmRSS", "RssAnon", "RssFile", "RssShmem", "Pss", "Pss_Anon")}
    wpid = worker_pick(pid, pids)
    worker = next((p for p in procs if p["pid"] == wpid), procs[0])
    return {"procs": procs, "sum": total, "worker": worker}


def slab_kib():
    """System-wide kernel slab (reclaimable + not), KiB: where struct sock and friends live."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("Slab:"):
                return int(line.split()[1])
    return None


def sockstat():
    with open("/proc/net/sockstat") as f:
        for line in f:
            if line.startswith("TCP:"):
                return line.strip()
    return "?"


# --- contenders ------------------------------------------------------------------------

class Contender:
    def __init__(self, name, label, argv, conns_test, worker_pick, expect_procs=1,
                 sluice=False, conf=None, tls=False):
        self.name = name
        self.label = label
        self.argv = argv                  # port -> argv
        self.conns_test = conns_test      # False: idle RSS only
        self.worker_pick = worker_pick
        self.expect_procs = expect_procs
        self.sluice = sluice
        self.conf = conf                  # port -> None (writes the config)
        self.tls = tls                    # the client speaks HTTPS (ECDSA P-256, TLS 1.3)
        self.rounds = []


def self_pick(pid, pids):
    return pid


def child_pick(pid, pids):
    kids = [p for p in pids if p != pid]
    return kids[0] if kids else pid


def nginx_conf_text(run_dir, name, port, backend, nofile, conns, tls=()):
    # proxy.sh's, less upstream keepalive_requests and the proxy timeouts.
    return benchlib.nginx_conf(run_dir, name, conns, benchlib.nginx_proxy_http(
        port, backend, upstream=("keepalive_timeout 30s;",), location=(), tls=tls), nofile)


def haproxy_conf_text(port, backend, conns, relax, bind_extra=""):
    # HAProxy wants ~2 fds per maxconn and by default refuses to start when it cannot raise
    # the limit that far; `no strict-limits` lets it run with what the hard limit allows.
    return benchlib.haproxy_conf(port, backend, conns, ["no strict-limits"] if relax else [],
                                 defaults=[f"maxconn {conns}", *benchlib.HAPROXY_HTTP_TIMEOUTS],
                                 bind_extra=bind_extra)


def make_contenders(args, k, run_dir, backend):
    extra = k["sluice_args"]
    cap = k["max_connections"]
    small = 4096  # sluice's default --max-connections
    cpus = len(os.sched_getaffinity(0))
    out = []

    cert, key = (os.path.join(args.certs or "", f"ecdsa.{x}") for x in ("pem", "key"))

    def sl(name, label, workers, limit, conns_test, tls=False):
        w = ["--workers", str(workers)] if workers else []
        lim = ["--max-connections", str(limit)] if limit else []
        t = ["--tls-cert", cert, "--tls-key", key] if tls else []
        out.append(Contender(
            name, label,
            lambda p: [args.sluice, "--listen", f"127.0.0.1:{p}", "--backend", backend] + w + lim + t + extra,
            conns_test, self_pick, sluice=True, tls=tls))

    def nginx(name, label, conns, conns_test, tls=False):
        conf = os.path.join(run_dir, f"{name}.conf")
        ssl_lines = (f"ssl_certificate {cert};", f"ssl_certificate_key {key};",
                     "ssl_session_cache off;") if tls else ()

        def write(p):
            with open(conf, "w") as f:
                f.write(nginx_conf_text(run_dir, name, p, backend, k["nofile"], conns, ssl_lines))
        out.append(Contender(
            name, label,
            lambda p: [args.nginx, "-e", os.path.join(run_dir, f"{name}.error.log"),
                       "-p", run_dir + "/", "-c", conf],
            conns_test, child_pick, expect_procs=2, conf=write, tls=tls))

    def haproxy(name, label, conns, conns_test, tls=False):
        conf = os.path.join(run_dir, f"{name}.cfg")
        relax = k["nofile"] < 2 * conns + 100
        both = os.path.join(run_dir, "ecdsa.both.pem")  # HAProxy: certificate + key, one file

        def write(p):
            if tls:
                with open(both, "w") as f:
                    f.write(open(cert).read() + open(key).read())
            with open(conf, "w") as f:
                f.write(haproxy_conf_text(p, backend, conns, relax,
                                          f" ssl crt {both}" if tls else ""))
        out.append(Contender(name, label + (", no strict-limits" if relax else ""),
                             lambda p: [args.haproxy, "-db", "-f", conf],
                             conns_test, self_pick, conf=write, tls=tls))

    for t in k["targets"]:
        if t == "sluice-w1":
            sl("sluice-w1-4096", "sluice --workers 1 (default limits)", 1, 0, False)
            sl("sluice-w1", f"sluice --workers 1 --max-connections {cap}", 1, cap, True)
        elif t == "sluice-default":
            sl("sluice-default-4096", f"sluice, default workers (= {cpus}), default limits",
               0, 0, False)
            sl("sluice-default", f"sluice, default workers (= {cpus}), --max-connections {cap}",
               0, cap, True)
        elif t == "nginx":
            nginx("nginx-4096", f"nginx, master + 1 worker, worker_connections {small}", small, False)
            nginx("nginx", f"nginx, master + 1 worker, worker_connections {cap}", cap, True)
        elif t == "haproxy":
            haproxy("haproxy-4096", f"HAProxy -db, nbthread 1, maxconn {small}", small, False)
            haproxy("haproxy", f"HAProxy -db, nbthread 1, maxconn {cap}", cap, True)
        elif t == "tls":
            if not args.certs:
                raise HarnessError("MEMORY_TARGETS has tls but no certificate was made")
            sl("sluice-w1-tls", f"HTTPS: sluice --workers 1 --max-connections {cap}", 1, cap,
               True, tls=True)
            nginx("nginx-tls", f"HTTPS: nginx, worker_connections {cap}", cap, True, tls=True)
            haproxy("haproxy-tls", f"HTTPS: HAProxy, maxconn {cap}", cap, True, tls=True)
        else:
            raise HarnessError(f"MEMORY_TARGETS: unknown target {t!r}")
    return out


# --- the client: many idle keep-alive connections --------------------------------------

REQUEST = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
IP_BIND_ADDRESS_NO_PORT = 24


def response_done(buf):
    """(complete, status) for a response with a Content-Length body."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return False, None
    head = buf[:end].decode("latin-1")
    status = int(head.split(" ", 2)[1])
    m = re.search(r"(?im)^content-length:\s*(\d+)\s*$", head)
    if not m:
        return True, status  # no body we know how to wait for; the head is enough
    return len(buf) >= end + 4 + int(m.group(1)), status


class Client:
    """Opens n connections, one exchange each, and keeps them open and idle."""

    def __init__(self, port, n, concurrency, source_ips, waves=1, wave_gap_s=0.0, tls=False):
        self.port = port
        self.tls = benchlib.client_tls() if tls else None
        self.n = n
        self.waves = waves
        self.wave_gap_s = wave_gap_s
        self.concurrency = concurrency
        self.source_ips = source_ips
        self.ep = select.epoll()
        self.idle = {}          # fd -> socket, exchange done, connection kept
        self.failures = {}      # kind -> count
        self.bad_status = {}

    def _fail(self, kind):
        self.failures[kind] = self.failures.get(kind, 0) + 1

    def open_all(self, timeout_s):
        """Opens the connections in `waves` waves, `wave_gap_s` apart (1 wave: all at once)."""
        deadline = time.monotonic() + timeout_s
        done = 0
        for w in range(self.waves):
            upto = self.n * (w + 1) // self.waves
            self._open(upto - done, deadline)
            done = upto
            if w + 1 < self.waves:
                time.sleep(self.wave_gap_s)
        # From now on, any readiness on an idle connection means the proxy closed it (EOF,
        # RST) or sent something unasked.
        for fd in self.idle:
            self.ep.register(fd, select.EPOLLIN | select.EPOLLRDHUP)

    def _open(self, n, deadline):
        states = {}  # fd -> [socket, phase, buffer]
        started = 0
        while started < n or states:
            while started < n and len(states) < self.concurrency:
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setblocking(False)
                if len(self.source_ips) > 1:
                    s.setsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1)
                    s.bind((self.source_ips[started % len(self.source_ips)], 0))
                err = s.connect_ex(("127.0.0.1", self.port))
                started += 1
                if err not in (0, errno.EINPROGRESS):
                    self._fail(f"connect: {errno.errorcode.get(err, err)}")
                    s.close()
                    continue
                states[s.fileno()] = [s, "connect", b""]
                self.ep.register(s.fileno(), select.EPOLLOUT)
            if time.monotonic() > deadline:
                for s, _, _ in states.values():
                    self._fail("timeout opening")
                    self.ep.unregister(s.fileno())
                    s.close()
                break
            for fd, ev in self.ep.poll(0.5):
                st = states[fd]
                s = st[0]
                try:
                    if st[1] == "connect":
                        err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                        if err:
                            raise OSError(err, os.strerror(err))
                        if self.tls:
                            st[0] = s = self.tls.wrap_socket(
                                s, server_hostname="localhost", do_handshake_on_connect=False)
                            st[1] = "handshake"
                        else:
                            s.send(REQUEST)  # 30 bytes into an empty send buffer: all of it
                            st[1] = "read"
                            self.ep.modify(fd, select.EPOLLIN)
                            continue
                    if st[1] == "handshake":
                        if not self._handshake(fd, s):
                            continue
                        st[1] = "read"
                        continue
                    try:
                        data = s.recv(65536)
                    except ssl.SSLWantReadError:
                        continue  # a TLS record not whole yet, or a session ticket
                    if not data:
                        raise ConnectionError("closed before the response")
                    st[2] += data
                    complete, status = response_done(st[2])
                    if not complete:
                        continue
                    self.ep.unregister(fd)
                    del states[fd]
                    body = st[2][st[2].find(b"\r\n\r\n") + 4:]
                    if status != 200 or body != b"hello\n":
                        key = f"{status} {body[:40]!r}"
                        self.bad_status[key] = self.bad_status.get(key, 0) + 1
                    self.idle[fd] = s
                except OSError as e:
                    self._fail(f"{type(e).__name__}: {e.strerror or e}")
                    self.ep.unregister(fd)
                    del states[fd]
                    s.close()

    def _handshake(self, fd, s):
        """One step of a non-blocking TLS handshake; True once done and the request sent."""
        try:
            s.do_handshake()
        except ssl.SSLWantReadError:
            self.ep.modify(fd, select.EPOLLIN)
            return False
        except ssl.SSLWantWriteError:
            self.ep.modify(fd, select.EPOLLOUT)
            return False
        s.send(REQUEST)  # one small record into an empty send buffer
        self.ep.modify(fd, select.EPOLLIN)
        return True

    def count_disturbed(self):
        return len(self.ep.poll(0, maxevents=max(1, len(self.idle))))

    def close_all(self):
        linger = struct.pack("ii", 1, 0)  # RST: no TIME_WAIT left behind
        for fd, s in self.idle.items():
            try:
                self.ep.unregister(fd)
            except OSError:
                pass
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            except OSError:
                pass
            s.close()
        self.idle.clear()
        self.ep.close()


def count_established(port):
    """The proxy's accepted sockets on its port, as `ss` sees them."""
    cmd = ["ss", "-Htn", "state", "established", f"( sport = :{port} )"]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None, " ".join(cmd)
    return sum(1 for line in out.splitlines() if line.strip()), \
        "ss -Htn state established '( sport = :PORT )' | wc -l"


# --- one contender, one round ------------------------------------------------------------

def start(c, port, run_dir, k):
    if c.conf:
        c.conf(port)
    logpath = os.path.join(run_dir, f"{c.name}.log")
    log = open(logpath, "ab")
    log.write(f"--- start on port {port}\n".encode())
    log.flush()
    offset = log.tell()
    proc = subprocess.Popen(c.argv(port), stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    log.close()
    started.append(proc)
    deadline = time.monotonic() + 10
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"exited with code {proc.returncode} (see {logpath})")
        ready = listening(port) and len(benchlib.tree(proc.pid)) >= c.expect_procs
        if ready and c.sluice:
            ready = bool(benchlib.log_lines(logpath, offset, "sluice: listening on"))
        if ready:
            return proc, logpath, offset
        if time.monotonic() > deadline:
            stop_tree(proc, 2)
            started.remove(proc)
            raise RuntimeError(f"not listening after 10 s (see {logpath})")
        time.sleep(0.01)


def one_round(c, k, run_dir, ports):
    port = ports.fresh()
    rec = {"port": port}
    try:
        proc, logpath, offset = start(c, port, run_dir, k)
    except RuntimeError as e:
        rec["error"] = f"did not start: {e}"
        return rec
    try:
        time.sleep(k["idle_wait"])
        rec["idle"] = tree_mem(proc.pid, c.worker_pick)
        if c.sluice:
            m = re.search(r"listening on \S+ \((workers=\d+, io=\w+)\)",
                          benchlib.wait_log_line(logpath, offset, "sluice: listening on") or "")
            rec["sluice_mode"] = m.group(1) if m else "?"
        if not c.conns_test:
            return rec
        rec["sockstat_before"] = sockstat()
        client = Client(port, k["connections"], k["concurrency"], k["source_ips"],
                        k["waves"], k["wave_gap"], tls=c.tls)
        rec["slab_before"] = slab_kib()
        t0 = time.monotonic()
        client.open_all(timeout_s=k["open_timeout"])
        rec["open_s"] = time.monotonic() - t0
        rec["hot"] = tree_mem(proc.pid, c.worker_pick)
        rec["open"] = len(client.idle)
        rec["failures"] = client.failures
        rec["bad_status"] = client.bad_status
        time.sleep(k["settle"])
        rec["settled"] = tree_mem(proc.pid, c.worker_pick)
        rec["established"], rec["ss_cmd"] = count_established(port)
        rec["disturbed"] = client.count_disturbed()
        rec["sockstat_settled"] = sockstat()
        rec["slab_settled"] = slab_kib()
        if c.sluice:
            n = len(benchlib.log_lines(logpath, offset, "sluice: stats "))
            os.kill(proc.pid, signal.SIGUSR2)
            rec["stats"] = benchlib.wait_log_line(logpath, offset, "sluice: stats ", after=n)
        client.close_all()
        time.sleep(0.5)
        rec["closed"] = tree_mem(proc.pid, c.worker_pick)
    except OSError as e:
        rec["error"] = f"{type(e).__name__}: {e}"
    finally:
        if not stop_tree(proc, 12):
            raise HarnessError(f"{c.name} (pid {proc.pid}) could not be stopped")
        started.remove(proc)
        if c.sluice:
            rec["exit"] = benchlib.wait_log_line(logpath, offset, "sluice: exit ", timeout_s=0.1)
    return rec


# --- report ----------------------------------------------------------------------------

def kib(v):
    return "—" if v is None else f"{v:,.0f}"


def report(args, k, contenders, began):
    n = k["connections"]
    out, md = [], []
    notes = []
    title = "sluice memory benchmark: idle RSS and memory per idle keep-alive connection"
    out += [f"## {title}", "", f"command: {args.command}", ""]
    md += [f"## {title}", "", f"Command: `{args.command}`", ""]

    # Table 1: idle
    h1 = ["proxy (processes)", "RSS sum KiB", "PSS sum KiB", "anon sum KiB",
          "worker RSS KiB", "worker PSS KiB", "rounds"]
    rows1 = []
    for c in contenders:
        ok = [r for r in c.rounds if "idle" in r]
        if not ok:
            err = next((r.get("error") for r in c.rounds if r.get("error")), "no rounds")
            rows1.append([c.label, "FAILED"] + ["—"] * (len(h1) - 2))
            notes.insert(0, f"⚠ {c.label} FAILED: {err}")
            continue
        procs = " + ".join(p["Name"] for p in ok[0]["idle"]["procs"])
        threads = sum(p.get("Threads", 1) for p in ok[0]["idle"]["procs"])
        rows1.append([
            f"{c.label} ({procs}; {threads} thread{'s' if threads > 1 else ''})",
            kib(med(r["idle"]["sum"]["VmRSS"] for r in ok)),
            kib(med(r["idle"]["sum"]["Pss"] for r in ok)),
            kib(med(r["idle"]["sum"]["RssAnon"] for r in ok)),
            kib(med(r["idle"]["worker"]["VmRSS"] for r in ok)),
            kib(med(r["idle"]["worker"].get("Pss") for r in ok)),
            str(len(ok)),
        ])
    legend1 = ("Idle: started, no connection ever made, read after"
               f" {k['idle_wait']:g} s; medians over the rounds. RSS = VmRSS, PSS = Pss from"
               " smaps_rollup (shared pages divided among the processes mapping them: nginx's"
               " master and worker share most of the binary and libc), anon = RssAnon. sum:"
               " every process of the proxy; worker: nginx's worker process alone (sluice"
               " and HAProxy -db are one process, so their worker columns equal the sum).")
    out += ["### idle, right after start (no traffic)", "", benchlib.text_table(h1, rows1), "",
            legend1, ""]
    md += ["### Idle, right after start (no traffic)", "", benchlib.md_table(h1, rows1), "",
           f"_{legend1}_", ""]

    # Table 2: connections
    h2 = ["proxy", "open / ss established", "RSS idle KiB", "RSS hot KiB",
          "RSS settled KiB", "bytes/conn (RSS)", "bytes/conn (PSS)", "worker bytes/conn",
          "RSS after close KiB", "rounds"]
    rows2 = []
    summary = {}
    for c in contenders:
        if not c.conns_test:
            continue
        ok = [r for r in c.rounds if "settled" in r]
        if not ok:
            rows2.append([c.label, "FAILED"] + ["—"] * (len(h2) - 2))
            continue

        def per_conn(r, key, part="sum"):
            opened = max(r["open"], 1)
            return (r["settled"][part][key] - r["idle"][part][key]) * 1024 / opened

        s = {
            "open": med(r["open"] for r in ok),
            "established": med(r["established"] for r in ok),
            "idle": med(r["idle"]["sum"]["VmRSS"] for r in ok),
            "hot": med(r["hot"]["sum"]["VmRSS"] for r in ok),
            "settled": med(r["settled"]["sum"]["VmRSS"] for r in ok),
            "closed": med(r["closed"]["sum"]["VmRSS"] for r in ok if "closed" in r),
            "per_conn_rss": med(per_conn(r, "VmRSS") for r in ok),
            "per_conn_pss": med(per_conn(r, "Pss") for r in ok),
            "per_conn_worker": med(per_conn(r, "VmRSS", "worker") for r in ok),
            "per_conn_rss_all": [round(per_conn(r, "VmRSS")) for r in ok],
            "slab_per_conn": med((r["slab_settled"] - r["slab_before"]) * 1024 / max(r["open"], 1)
                                 for r in ok if r.get("slab_before") is not None),
        }
        summary[c.name] = s
        rows2.append([
            c.label,
            f"{s['open']:,.0f} / {s['established']:,.0f}" if s["established"] is not None
            else f"{s['open']:,.0f} / ?",
            kib(s["idle"]), kib(s["hot"]), kib(s["settled"]),
            f"{s['per_conn_rss']:,.0f}", f"{s['per_conn_pss']:,.0f}",
            f"{s['per_conn_worker']:,.0f}", kib(s["closed"]),
            f"{len(ok)} ({', '.join(f'{v:,}' for v in s['per_conn_rss_all'])} B)",
        ])
        for r in ok:
            if r["open"] < n:
                notes.append(f"⚠ {c.label}: only {r['open']} of {n} connections opened in one"
                             f" round: {r['failures']}")
            if r["established"] is not None and r["established"] < r["open"]:
                notes.append(f"⚠ {c.label}: ss saw {r['established']} established sockets on"
                             f" the proxy's port for {r['open']} open client connections")
            if r["disturbed"]:
                notes.append(f"⚠ {c.label}: {r['disturbed']} idle connections were closed or"
                             " written to by the proxy during the settle period")
            if r["bad_status"]:
                notes.append(f"⚠ {c.label}: unexpected responses {r['bad_status']}")
        if c.sluice:
            st = next((r.get("stats") for r in reversed(ok) if r.get("stats")), None)
            ex = next((r.get("exit") for r in reversed(ok) if r.get("exit")), None)
            notes.append(f"{c.label}: stats at the settled reading: {st or '(no stats line)'}")
            notes.append(f"{c.label}: exit line: {ex or '(no exit line)'}")
        notes.append(f"{c.label}: opening {n:,} connections took"
                     f" {med(r['open_s'] for r in ok):.2f} s (median)")
    legend2 = (f"{n:,} client connections, each with one keep-alive `GET /` answered in full"
               f" (200 `hello\\n`), then idle. idle: RSS before the first connection; hot:"
               f" right after the last response; settled: after {k['settle']:g} s more with"
               f" every connection idle; bytes/conn = (settled − idle) / open connections, for"
               " the sum over all the proxy's processes (RSS and PSS) and for the worker"
               " process alone; medians over the rounds (each round's RSS figure in the last"
               " column). after close: every client socket closed (RST), 0.5 s later. open /"
               f" ss established: client connections with a complete exchange / the proxy's"
               f" established sockets on its port counted with `ss` at the settled reading.")
    out += [f"### {n:,} idle keep-alive connections", "", benchlib.text_table(h2, rows2), "",
            legend2, ""]
    md += [f"### {n:,} idle keep-alive connections", "", benchlib.md_table(h2, rows2), "",
           f"_{legend2}_", ""]

    kernel = ("RSS is user-space memory only: the kernel's per-socket memory (struct sock,"
              " file, socket buffers; for an idle loopback TCP connection a few KiB per"
              " socket, on both ends) is not in any of these figures. /proc/net/sockstat"
              " (TCP line; mem is in pages) around one round of each proxy:")
    slab = "; ".join(f"{c.label}: {summary[c.name]['slab_per_conn']:,.0f} B"
                     for c in contenders if c.name in summary
                     and summary[c.name]["slab_per_conn"] is not None)
    slab_line = ("Kernel slab (/proc/meminfo Slab, system-wide, so other programs add noise) grew"
                 " per connection, for both ends of each loopback connection together (the"
                 " client's socket and the proxy's), median: " + (slab or "n/a") + ".")
    out += ["### kernel memory", kernel + " " + slab_line]
    md += ["### Kernel memory", "", kernel + " " + slab_line, ""]
    for c in contenders:
        r = next((r for r in reversed(c.rounds) if "sockstat_settled" in r), None)
        if r:
            line = f"{c.label}: before {r['sockstat_before']}; settled {r['sockstat_settled']}"
            out.append(f"  {line}")
            md.append(f"- {line}")

    cmds = [f"{c.name}: {' '.join(c.argv('PORT'))}".replace(k["backend"], "127.0.0.1:BACKEND")
            for c in contenders]
    method = [
        f"rounds: {k['rounds']}; each round starts every proxy afresh, one at a time, in an"
        " order rotated by one per round; a fresh free port each time.",
        f"client: this Python process, non-blocking sockets and epoll, {k['concurrency']}"
        f" connects/exchanges in flight at a time; request `GET / HTTP/1.1` + `Host: x`"
        f" (keep-alive); source address{'es' if len(k['source_ips']) > 1 else ''}"
        f" {', '.join(k['source_ips'])}"
        + (f"; opened in {k['waves']} waves {k['wave_gap']:g} s apart" if k["waves"] > 1
           else "; all opened in one go (with sluice, up to all of them are within their"
                " first idle second, buffer still held, at the same time)") + ".",
        "backend: nginx (master + 1 worker), `return 200 \"hello\\n\"`, keep-alive, started"
        " once; its memory is not counted.",
        "sluice: defaults apart from --workers and --max-connections (client idle timeout 60 s;"
        " an idle connection's buffer goes back to the pool after 1 s)"
        + (f"; SLUICE_ARGS {' '.join(k['sluice_args'])}" if k["sluice_args"] else "") + ".",
        f"nginx: master_process on, worker_processes 1, worker_connections {k['max_connections']},"
        f" worker_rlimit_nofile {k['nofile']}, keepalive_timeout 60s, access_log off,"
        " upstream keepalive 64 (the proxy.sh config).",
        f"HAProxy: -db (one process), nbthread 1, maxconn {k['max_connections']} (global and"
        " defaults), timeout client / http-keep-alive 60s, keep-alive, http-reuse always"
        + (f"; `no strict-limits`, because maxconn {k['max_connections']} asks for ~2 fds per"
           f" connection and the fd limit here is {k['nofile']} (enough for {n:,} clients plus"
           " upstream; without it HAProxy refuses to start)"
           if k["nofile"] < 2 * k["max_connections"] + 100 else "") + ".",
        "established count: `ss -Htn state established '( sport = :PORT )' | wc -l`.",
    ]
    out += ["", "### method and commands"] + method + [f"  {x}" for x in cmds]
    md += ["", "### Method and commands", ""] + [f"- {x}" for x in method] + \
        ["", "```"] + cmds + ["```"]
    if notes:
        out += ["", "### notes"] + notes
        md += ["", "### Notes", ""] + [f"- {x}" for x in notes]
    out += ["", "### machine"] + list(args.info)
    md += ["", "### Machine", ""] + [f"- {x}" for x in args.info]
    tail = (f"run folder (configs, logs): {args.run_dir}; harness took"
            f" {time.monotonic() - began:.0f} s")
    out.append(tail)
    md.append(f"- {tail}")
    benchlib.write_report(args.report, out, md, {
        "knobs": k, "summary": summary, "rounds": {c.name: c.rounds for c in contenders}})
    note(f"wrote {args.report}")


# --- main ------------------------------------------------------------------------------

def main():
    args = benchlib.harness_args(__doc__, "bench/memory.sh", required=("--nginx", "--haproxy"),
                                 optional=("--certs",))
    began = time.monotonic()
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    k = {
        "connections": env_int("MEMORY_CONNECTIONS", 10000, 1),
        "concurrency": env_int("MEMORY_CONCURRENCY", 200, 1),
        "settle": env_float("MEMORY_SETTLE", 2),
        "idle_wait": env_float("MEMORY_IDLE_WAIT", 1),
        "rounds": env_int("MEMORY_ROUNDS", 3, 1),
        "open_timeout": env_float("MEMORY_OPEN_TIMEOUT", 60, 1),
        "waves": env_int("MEMORY_WAVES", 1, 1),
        "wave_gap": env_float("MEMORY_WAVE_GAP", 1.5),
        "targets": os.environ.get("MEMORY_TARGETS", "sluice-w1 sluice-default nginx haproxy").split(),
        "sluice_args": os.environ.get("SLUICE_ARGS", "").split(),
        "nofile": soft,
    }
    # Room for every connection twice over (nginx and HAProxy also count upstream sockets).
    k["max_connections"] = max(20000, 2 * k["connections"])
    if soft < k["connections"] + 1000:
        raise HarnessError(f"the fd limit is {soft}: too low for {k['connections']} client"
                           " connections in this process (raise MEMORY_NOFILE or the hard limit)")
    lo, hi = benchlib.ephemeral_range()
    # Ephemeral ports are per (source IP, destination): spread over 127.0.0.X when one
    # source address would not have enough of them.
    ips = max(1, math.ceil(k["connections"] / (0.8 * (hi - lo + 1))))
    k["source_ips"] = [f"127.0.0.{i + 1}" for i in range(ips)]
    run_dir = os.path.abspath(args.run_dir)
    ports = benchlib.Ports()  # below the ephemeral range, which our client sockets use
    bport = ports.fresh()
    backend = benchlib.start_hello_backend(args.nginx, run_dir, bport)
    k["backend"] = f"127.0.0.1:{bport}"
    note(f"backend nginx on {k['backend']}")
    contenders = make_contenders(args, k, run_dir, k["backend"])
    for i in range(k["rounds"]):
        for j in range(len(contenders)):
            c = contenders[(i + j) % len(contenders)]
            rec = one_round(c, k, run_dir, ports)
            c.rounds.append(rec)
            if "error" in rec:
                note(f"round {i + 1}/{k['rounds']} {c.name}: {rec['error']}")
            elif "settled" in rec:
                note(f"round {i + 1}/{k['rounds']} {c.name}: idle {rec['idle']['sum']['VmRSS']:,} KiB,"
                     f" {rec['open']:,} open ({rec['established']} established),"
                     f" settled {rec['settled']['sum']['VmRSS']:,} KiB ="
                     f" {(rec['settled']['sum']['VmRSS'] - rec['idle']['sum']['VmRSS']) * 1024 / max(rec['open'], 1):,.0f}"
                     " B/conn")
            else:
                note(f"round {i + 1}/{k['rounds']} {c.name}: idle {rec['idle']['sum']['VmRSS']:,} KiB")
            if not benchlib.pid_alive(backend.pid):
                raise HarnessError("the backend nginx died")
    report(args, k, contenders, began)
    return 0


if __name__ == "__main__":
    benchlib.run_harness("memory.py", main, grace_s=2)
