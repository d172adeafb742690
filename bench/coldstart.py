#!/usr/bin/env python3
"""Cold-start driver for bench/coldstart.sh (Python 3 stdlib only).

Measures process spawn to the first proxied 200 for each contender:

    t0 = perf_counter_ns(); Popen([...]) (no shell); connect() until the port accepts
    (refused: retry at once, or after COLDSTART_POLL_US); send
    `GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n`; read until the whole
    response (head + Content-Length body) has arrived; t1 = perf_counter_ns().

Then SIGKILL to the contender's process group (each contender is started in its own
session, so nginx's worker goes with its master), wait for it, reap any orphan (this
process is a child subreaper), and check the group is gone. Every run uses a fresh port
below the kernel's ephemeral range that a bind() without SO_REUSEADDR has just found free
(so no TIME_WAIT socket or leftover listener of an earlier run is on it). The proxies
forward to one backend (nginx, `return 200 "hello\\n"`) started once before the loop; the
backend is not part of the timed start. Contenders are interleaved: every round runs each
once, in an order rotated by one each round.

It is a measurement, not a test: exits non-zero only when the harness breaks (the backend
does not start, a contender's processes survive SIGKILL, no free port).

Usage: coldstart.py --sluice BIN --floor BIN --nginx BIN --haproxy BIN --run-dir DIR
                    --report FILE.md [--release BIN] [--info TEXT]... [--command TEXT]
Knobs come from the environment; bench/coldstart.sh --help lists them.
"""

import ctypes
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402 - next to this file
from benchlib import HarnessError, env_float, env_int  # noqa: E402

note = benchlib.make_note("coldstart")


# --- processes -------------------------------------------------------------------------

PR_SET_CHILD_SUBREAPER = 36
PR_SET_TIMERSLACK = 29


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def set_timer_slack_ns(ns):
    """A short sleep between connect attempts should be short: the default 50 µs timer slack
    would stretch a 20 µs sleep to ~70 µs. (Children inherit it; no contender sleeps on a
    timer while starting.)"""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_TIMERSLACK, ns, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper():
    """Orphans of our children (nginx's worker once its master is killed) become ours, so
    they can be reaped and checked gone before the next run."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def reap_orphans():
    """Reaps every exited child; returns the CPU seconds (user + system) they used."""
    cpu = 0.0
    while True:
        try:
            pid, _, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:
            return cpu
        if pid == 0:
            return cpu
        cpu += usage.ru_utime + usage.ru_stime


def kill_group(proc, timeout_s=5.0):
    """SIGKILL the contender's whole process group, wait for it, and make sure nothing of it
    is left (live or zombie) before the next run. Returns the CPU seconds (user + system, all
    threads) the group's processes used from exec to the kill: the contender's own process
    from wait4(), and orphans (nginx's worker) as they are reaped."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    cpu = 0.0
    if proc.returncode is None:
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        cpu += usage.ru_utime + usage.ru_stime
    deadline = time.monotonic() + timeout_s
    while True:
        cpu += reap_orphans()
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return cpu
        if time.monotonic() > deadline:
            raise HarnessError(f"process group {proc.pid} ({proc.args[0]}) survived SIGKILL")
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            return cpu
        time.sleep(0.001)


# --- contenders ------------------------------------------------------------------------

class Contender:
    def __init__(self, name, label, argv, conf=None, note_text="", request=None,
                 expect=b"hello\n", tls=None):
        self.name = name
        self.label = label
        self.argv = argv          # function: port -> argv list
        self.conf = conf          # function: port -> None (writes the config before t0)
        self.note = note_text
        self.request = request or REQUEST  # bytes sent once connected
        self.expect = expect      # the 200's body, checked
        self.tls = tls            # an ssl.SSLContext: handshake before the request (timed)
        self.runs = []            # measured runs (dicts)
        self.warmups = []
        self.log = None           # open file, stdout+stderr of every run


def make_contenders(args, k, run_dir, backend_port, targets):
    B = f"127.0.0.1:{backend_port}"
    out = []

    def sluice(name, binary, workers, label, extra=(), tls=None):
        wflag = ["--workers", str(workers)] if workers else []
        more = list(extra) + k["sluice_args"]
        out.append(Contender(
            name, label,
            lambda p: [binary, "--listen", f"127.0.0.1:{p}", "--backend", B] + wflag + more,
            tls=tls))

    cpus = len(os.sched_getaffinity(0))
    for t in targets:
        if t == "floor":
            if args.floor:
                out.append(Contender("floor", "floor, static glibc (gcc; not a proxy)",
                                     lambda p: [args.floor, str(p)]))
        elif t == "floor-musl":
            if args.floor_musl:
                out.append(Contender("floor-musl", "floor, static musl (zig cc; not a proxy)",
                                     lambda p: [args.floor_musl, str(p)]))
        elif t == "sluice-w1":
            sluice("sluice-w1", args.sluice, 1, "sluice --workers 1")
        elif t == "sluice-epoll":
            sluice("sluice-epoll", args.sluice, 1, "sluice --workers 1 --io epoll", ["--io", "epoll"])
        elif t == "sluice-tls":
            if args.tls_cert:
                sluice("sluice-tls", args.sluice, 1,
                       "sluice --workers 1, HTTPS (ECDSA P-256; handshake timed)",
                       ["--tls-cert", args.tls_cert, "--tls-key", args.tls_key], benchlib.client_tls())
        elif t == "sluice-default":
            sluice("sluice-default", args.sluice, 0,
                   f"sluice, default workers (one per CPU = {cpus})")
        elif t == "sluice-release":
            if args.release:
                sluice("sluice-release", args.release, 1,
                       "sluice --workers 1, release binary (musl, stripped)")
        elif t == "nginx":
            conf = os.path.join(run_dir, "nginx.conf")

            def nginx_conf(p, conf=conf):
                # proxy.sh's, less what one request on a new connection never uses: the
                # client and upstream keep-alive tuning, the proxy timeouts, the backlog.
                with open(conf, "w") as f:
                    f.write(benchlib.nginx_conf(run_dir, "nginx", 4096, benchlib.nginx_proxy_http(
                        p, B, client=(), upstream=(), location=(), backlog=None)))
            out.append(Contender(
                "nginx", "nginx (master + 1 worker)",
                lambda p, conf=conf: [args.nginx, "-e", os.path.join(run_dir, "nginx.error.log"),
                                      "-p", run_dir + "/", "-c", conf],
                nginx_conf))
        elif t == "haproxy":
            conf = os.path.join(run_dir, "haproxy.cfg")

            def haproxy_conf(p, conf=conf):
                haproxy_conf_text(p, conf, B)
            out.append(Contender("haproxy", "HAProxy (-db, nbthread 1)",
                                 lambda p, conf=conf: [args.haproxy, "-db", "-f", conf],
                                 haproxy_conf))
        elif t == "haproxy-noca":
            conf = os.path.join(run_dir, "haproxy-noca.cfg")

            def haproxy_noca_conf(p, conf=conf):
                haproxy_conf_text(p, conf, B, "httpclient.ssl.verify none")
            out.append(Contender("haproxy-noca", "HAProxy, + httpclient.ssl.verify none",
                                 lambda p, conf=conf: [args.haproxy, "-db", "-f", conf],
                                 haproxy_noca_conf))
        else:
            raise HarnessError(f"COLDSTART_TARGETS: unknown target {t!r}")
    # Other builds of sluice, as `sluice-w1` rows of their own: an A/B of a start-up change
    # measured in one run, interleaved with the rest, so the machine's load lands on both.
    for variant in k["variants"]:
        name, sep, binary = variant.partition("=")
        if not sep or not name or not os.access(binary, os.X_OK):
            raise HarnessError(f"COLDSTART_VARIANTS: want NAME=EXECUTABLE, got {variant!r}")
        sluice(f"variant-{name}", binary, 1, f"sluice --workers 1, variant {name}")
    return out


def haproxy_conf_text(p, conf, B, *global_lines):
    # proxy.sh's, less the request timeouts and the X-Forwarded-Proto/Host lines.
    with open(conf, "w") as f:
        f.write(benchlib.haproxy_conf(p, B, 4096, global_lines, defaults=(), frontend=()))


# --- one timed run ---------------------------------------------------------------------

REQUEST = b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def read_response(sock, deadline):
    """Reads one response with a Content-Length body. Returns (status, body)."""
    buf = b""
    while True:
        end = buf.find(b"\r\n\r\n")
        if end >= 0:
            head = buf[:end].decode("latin-1")
            m = re.search(r"(?im)^content-length:\s*(\d+)\s*$", head)
            status = int(head.split(" ", 2)[1])
            if m and len(buf) >= end + 4 + int(m.group(1)):
                return status, buf[end + 4:end + 4 + int(m.group(1))]
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("response not complete before the deadline")
        sock.settimeout(left)
        chunk = sock.recv(65536)
        if not chunk:
            if end >= 0 and not re.search(r"(?im)^content-length:", buf[:end].decode("latin-1")):
                return int(buf.split(b" ", 2)[1]), buf[end + 4:]
            raise ConnectionError(f"closed after {len(buf)} bytes: {buf[:120]!r}")
        buf += chunk


def timed_run(c, port, k, devnull, before_kill=None):
    if c.conf:
        c.conf(port)
    argv = c.argv(port)
    addr = ("127.0.0.1", port)
    poll_s = k["poll_us"] / 1e6
    rec = {"port": port}
    refused = 0
    deadline = time.monotonic() + k["timeout"]
    t0 = time.perf_counter_ns()
    proc = subprocess.Popen(argv, stdin=devnull, stdout=c.log, stderr=c.log,
                            start_new_session=True)
    t_spawned = time.perf_counter_ns()
    sock = None
    try:
        while True:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.connect(addr)
                sock = s
                break
            except ConnectionRefusedError:
                s.close()
                refused += 1
                if proc.poll() is not None:
                    raise ConnectionError(f"exited with code {proc.returncode} before accepting")
                if time.monotonic() > deadline:
                    raise TimeoutError("port never accepted")
                if poll_s:
                    time.sleep(poll_s)
        t_conn = time.perf_counter_ns()
        if c.tls:
            sock.settimeout(max(0.001, deadline - time.monotonic()))
            sock = c.tls.wrap_socket(sock, server_hostname="localhost")
        sock.sendall(c.request)
        status, body = read_response(sock, deadline)
        t1 = time.perf_counter_ns()
        if status != 200 or body != c.expect:
            raise ValueError(f"got {status} {body[:60]!r}, want 200 {c.expect!r}")
        rec.update(ok=True, total_us=(t1 - t0) / 1e3, spawn_us=(t_spawned - t0) / 1e3,
                   listen_us=(t_conn - t0) / 1e3, refused=refused)
        if c.name in WARM_ROWS:
            rec["warm_us"] = warm_request(c, addr, deadline)
    except (OSError, ValueError, TimeoutError) as e:
        rec.update(ok=False, error=f"{type(e).__name__}: {e}", refused=refused)
    finally:
        if sock is not None:
            sock.close()
        if before_kill:
            before_kill()
        rec["cpu_us"] = kill_group(proc) * 1e6
    return rec


# The rows whose running process also answers a second request on a new connection (its TLS
# handshake a full one: Python offers no session), timed alone: what the first request costs
# beyond start-up. sluice-tls's minus sluice-w1's is one full handshake on a running sluice.
WARM_ROWS = ("sluice-w1", "sluice-tls")


def warm_request(c, addr, deadline):
    t0 = time.perf_counter_ns()
    sock = socket.create_connection(addr, timeout=max(0.001, deadline - time.monotonic()))
    try:
        if c.tls:
            sock = c.tls.wrap_socket(sock, server_hostname="localhost")
        sock.sendall(c.request)
        status, body = read_response(sock, deadline)
        if status != 200 or body != c.expect:
            raise ValueError(f"warm request: got {status} {body[:60]!r}")
        return (time.perf_counter_ns() - t0) / 1e3
    finally:
        sock.close()


# --- report ----------------------------------------------------------------------------

def summarize(runs):
    ok = sorted(r["total_us"] for r in runs if r["ok"])
    if not ok:
        return None
    return {
        "n": len(ok),
        "failed": sum(1 for r in runs if not r["ok"]),
        "median": statistics.median(ok),
        "p90": benchlib.nearest_rank(ok, 90),
        "min": ok[0],
        "max": ok[-1],
        "listen": statistics.median(r["listen_us"] for r in runs if r["ok"]),
        "spawn": statistics.median(r["spawn_us"] for r in runs if r["ok"]),
        "refused": statistics.median(r["refused"] for r in runs if r["ok"]),
        "cpu": statistics.median(r["cpu_us"] for r in runs if r["ok"]),
        "warm": (statistics.median(r["warm_us"] for r in runs if r["ok"] and "warm_us" in r)
                 if any("warm_us" in r for r in runs if r["ok"]) else None),
    }


def ms(us):
    return "—" if us is None else f"{us / 1000:.3f}"


TRACE_RE = re.compile(r"sluice: init (.+?)\s+(\d+) ns\s+total\s+(\d+) ns")


def trace_runs(c, k, ports, devnull, run_dir):
    """`--trace-init` runs of one sluice contender; returns (runs, the median run's lines)."""
    argv_plain = c.argv
    results = []
    for i in range(k["trace_runs"]):
        path = os.path.join(run_dir, f"trace-{c.name}-{i}.log")
        tc = Contender(c.name, c.label, lambda p: argv_plain(p) + ["--trace-init"])

        def until_last_phase(path=path):
            # With several workers the first response can come back before the last worker
            # is ready: wait (untimed) for the last phase line before the kill.
            benchlib.wait_log_line(path, 0, "sluice: init control loop", 2, poll_s=0.005)

        with open(path, "wb") as tc.log:
            rec = timed_run(tc, ports.fresh(), k, devnull, until_last_phase)
        with open(path, errors="replace") as f:
            text = f.read()
        lines = [ln for ln in text.splitlines() if "sluice: init " in ln or "listening on" in ln]
        phases = [(m.group(1).strip(), int(m.group(2)), int(m.group(3)))
                  for m in map(TRACE_RE.search, lines) if m]
        results.append({"rec": rec, "lines": lines, "phases": phases})
    good = [r for r in results if r["rec"]["ok"] and r["phases"]]
    if not good:
        return results, None
    good.sort(key=lambda r: r["rec"]["total_us"])
    return results, good[(len(good) - 1) // 2]


def report(args, k, contenders, traces, began, load):
    out, md = [], []
    w = out.append
    summaries = {c.name: summarize(c.runs) for c in contenders}
    floors = [(n, summaries[n]) for n in ("floor", "floor-musl") if summaries.get(n)]
    header = ["contender", "median ms", "p90 ms", "min ms", "max ms", "port open ms", "CPU ms"] + \
        [f"÷ {'glibc' if n == 'floor' else 'musl'} floor" for n, _ in floors] + ["runs ok/failed"]
    rows = []
    for c in contenders:
        s = summaries[c.name]
        if s is None:
            err = next((r["error"] for r in c.runs if not r["ok"]), "no runs")
            rows.append([c.label, f"FAILED: {err}"] + ["—"] * (len(header) - 2))
            continue
        rows.append([c.label, ms(s["median"]), ms(s["p90"]), ms(s["min"]), ms(s["max"]),
                     ms(s["listen"]), ms(s["cpu"])]
                    + [f"{s['median'] / f['median']:.2f}×" for _, f in floors]
                    + [f"{s['n']}/{s['failed']}"])

    title = f"sluice cold-start benchmark: spawn to first proxied 200 ({k['runs']} runs each)"
    legend = ("median/p90/min/max: process spawn (t0 before Popen) to the last byte of the"
              " first response, over the measured runs. port open: median time to the first"
              " connect() that was not refused (the listening socket exists; accept may not"
              " have run yet). CPU: median user + system time of the contender's processes"
              " (every thread; nginx's worker included) from exec to the kill right after the"
              " response, from wait4(): unlike the times, little moved by other load on the"
              " machine. ÷ floor: median ÷ that floor's median. The floors are not"
              " proxies: static C that binds, accepts and answers a fixed 200 itself.")
    ratio_lines = []
    # The design brief's target: spawn to first proxied 200 within 1.2× of the floor.
    target_ratio = 1.2
    sluice_rows = ["sluice-w1", "sluice-epoll", "sluice-default", "sluice-release"] + \
        [c.name for c in contenders if c.name.startswith("variant-")]
    for fname, f in floors:
        flabel = "static-glibc floor" if fname == "floor" else "static-musl floor"
        for name, target in [(n, target_ratio) for n in sluice_rows] + \
                [("nginx", None), ("haproxy", None), ("haproxy-noca", None)]:
            s = summaries.get(name)
            c = next((x for x in contenders if x.name == name), None)
            if not s or not c:
                continue
            r = s["median"] / f["median"]
            verdict = f" ({'meets' if r <= target else 'misses'} the ≤{target}× target)" if target else ""
            ratio_lines.append(f"{c.label} / {flabel}: {r:.2f}×{verdict}")
    sl = summaries.get("sluice-w1")
    tls = summaries.get("sluice-tls")
    if sl and tls:
        ratio_lines.append(f"sluice --workers 1, HTTPS / plain: {tls['median'] / sl['median']:.2f}×"
                           f" (+{(tls['median'] - sl['median']) / 1000:.2f} ms: the listener's"
                           " certificate loaded at start-up, and the first handshake)")
    if sl and tls and sl["warm"] is not None and tls["warm"] is not None:
        # Issue 21's target: spawn to the first HTTPS 200 at most 1.0 ms more than spawn to
        # the first plain 200 plus one full handshake on a running sluice (medians, this run).
        handshake = tls["warm"] - sl["warm"]
        excess = tls["median"] - sl["median"] - handshake
        verdict = "meets" if excess <= 1000 else "misses"
        ratio_lines.append(
            f"on the running process, a new connection's request: {ms(sl['warm'])} ms plain,"
            f" {ms(tls['warm'])} ms HTTPS (a full handshake: {ms(handshake)} ms); HTTPS start-up"
            f" beyond plain start-up and that handshake: {ms(excess)} ms ({verdict} the"
            " ≤1.0 ms target)")
    for peer in ("nginx", "haproxy", "haproxy-noca"):
        p = summaries.get(peer)
        if sl and p:
            ratio_lines.append(f"sluice --workers 1 / {peer}: {sl['median'] / p['median']:.2f}×"
                               f" ({p['median'] / sl['median']:.1f}× faster to its first 200)")
    spawn = statistics.median(r["spawn_us"] for c in contenders for r in c.runs if r["ok"])
    load_line = (f"other load during the loop: {load['other']:.2f} cores (machine busy"
                 f" {load['busy']:.2f} cores, of which this harness and its contenders"
                 f" {load['ours']:.2f}; loadavg before {load['loadavg_before']}, after"
                 f" {load['loadavg_after']})")
    if load["other"] > 0.1:
        load_line = "⚠ " + load_line + ": another program was busy, the absolute times are inflated; rerun on a quiet machine before quoting"

    commands = [f"{c.name}: {' '.join(c.argv('PORT'))}".replace(
        f"127.0.0.1:{k['backend_port']}", "127.0.0.1:BACKEND") for c in contenders]
    method = [
        f"timing: t0 = perf_counter_ns(); Popen(argv, start_new_session=True) (no shell);"
        f" connect() to 127.0.0.1:PORT until not refused (retry {'at once' if not k['poll_us'] else 'after a %g µs sleep, timer slack 1 µs' % k['poll_us']});"
        " send `GET / HTTP/1.1`, `Host: x`, `Connection: close`; read the full response"
        " (200, body `hello\\n`, checked); t1. Then SIGKILL to the process group, wait, reap."
        f" Popen() itself (fork + exec; it returns once exec has succeeded) took a median"
        f" {spawn / 1000:.3f} ms of every figure.",
        f"runs: {k['warmup']} warm-up + {k['runs']} measured per contender, interleaved (each"
        " round runs every contender once, order rotated by one per round); a fresh free port"
        " per run (checked with bind() without SO_REUSEADDR: no listener, no TIME_WAIT on it).",
        f"backend: nginx (master + 1 worker) on 127.0.0.1:{k['backend_port']}, `return 200"
        " \"hello\\n\"`, started once before the loop (not part of any timed start); every"
        " proxy opens a new upstream connection for the timed request.",
        "floors: bench/floor.c, static, binds + listens + accepts + answers a fixed 200 itself."
        " Not a proxy: what any server pays (fork/exec from Python, bind, listen, accept, one"
        " read and one write), the driver's own Popen cost included. Built twice: gcc with"
        " static glibc (whose start-up runs CPUID-based CPU feature detection, slow where"
        " CPUID traps to a hypervisor; dynamically linked nginx and HAProxy pay it too, in"
        " ld.so) and zig cc with static musl (none of that, like sluice, which has no libc).",
        "nginx: master_process on + worker_processes 1 (what an operator runs; `daemon off`"
        " in the config, foreground), worker_connections 4096, access_log off, upstream"
        " keepalive 64 with proxy_http_version 1.1 (as proxy.sh; irrelevant for one request),"
        " error log and temp paths in the run folder; run as `nginx -e ERRLOG -p DIR -c CONF`.",
        "HAProxy: `haproxy -db -f CFG`, nbthread 1, maxconn 4096, mode http, keep-alive,"
        " forwardfor; no master-worker mode (one process). Debian's HAProxy loads the system"
        " CA store (/usr/lib/ssl/certs, ~150 files) at start-up for its internal httpclient;"
        " the `+ httpclient.ssl.verify none` row is the same config with that global line,"
        " which skips it (what an operator who cares about start-up would set).",
        "sluice: all defaults (max-connections 4096, io auto: io_uring here) apart from"
        " --workers (and --io epoll in its row)"
        + (f"; SLUICE_ARGS {' '.join(k['sluice_args'])}" if k["sluice_args"] else "") + ".",
    ]

    w(f"## {title}")
    w("")
    w(f"command: {args.command}")
    w("")
    w(benchlib.text_table(header, rows))
    w("")
    w(legend)
    w("")
    w("ratios of medians:")
    for line in ratio_lines:
        w(f"  {line}")
    w("")
    w(load_line)
    md += [f"## {title}", "", f"Command: `{args.command}`", "", benchlib.md_table(header, rows), "",
           f"_{legend}_", "", "Ratios of medians:", ""] + [f"- {x}" for x in ratio_lines] + \
        ["", load_line]

    # --trace-init
    w("")
    w("### sluice --trace-init (each phase's own cost, and the total since main() started)")
    md += ["", "### sluice --trace-init", ""]
    for name, (results, median_run) in traces.items():
        c = next(x for x in contenders if x.name == name)
        if median_run is None:
            errs = "; ".join(r["rec"].get("error", "no init lines") for r in results)
            w(f"{c.label}: no usable traced run ({errs})")
            md.append(f"- {c.label}: no usable traced run ({errs})")
            continue
        ok = [r for r in results if r["rec"]["ok"] and r["phases"]]
        w(f"{c.label} --trace-init: the median of {len(ok)} traced runs by spawn-to-200"
          f" ({ms(median_run['rec']['total_us'])} ms from outside):")
        md.append(f"{c.label} `--trace-init`, the median of {len(ok)} traced runs by"
                  f" spawn-to-200 ({ms(median_run['rec']['total_us'])} ms from outside):")
        md.append("")
        md.append("```")
        for line in median_run["lines"]:
            w(f"  {line}")
            md.append(line)
        md.append("```")
        # When each phase ended, since main() started: order-independent ("first accept" is
        # printed by the worker that accepts, and may come before "workers ready").
        per = {}
        for r in ok:
            for n, _, total in r["phases"]:
                per.setdefault(n, []).append(total)
        summary = ", ".join(f"{n} {statistics.median(v) / 1000:.0f} µs"
                            for n, v in sorted(per.items(), key=lambda x: statistics.median(x[1])))
        w(f"  each phase's end since main(), median of the {len(ok)} runs: {summary}")
        md += ["", f"Each phase's end since main(), median of the {len(ok)} runs: {summary}", ""]

    # sizes
    w("")
    w("### binary sizes")
    md += ["", "### Binary sizes", ""]
    for label, path in (("sluice release (`make release`: musl, stripped)", args.release),
                        ("sluice as benchmarked (not stripped)", args.sluice),
                        ("floor, static glibc (gcc -O2 -static)", args.floor),
                        ("floor, static musl (zig cc -O2 -static)", args.floor_musl)):
        if path and os.path.exists(path):
            size = os.path.getsize(path)
            line = f"{label}: {size} bytes = {size / 1024:.1f} KiB ({path})"
        else:
            line = f"{label}: not built"
        w(line)
        md.append(f"- {line}")

    w("")
    w("### method and commands")
    md += ["", "### Method and commands", ""]
    for line in method:
        w(line)
        md.append(f"- {line}")
    for line in commands:
        w(f"  {line}")
    md += ["", "```"] + commands + ["```"]

    fails = [(c.label, r["error"]) for c in contenders for r in c.runs if not r["ok"]]
    if fails:
        w("")
        w(f"failed runs ({len(fails)}):")
        md += ["", f"Failed runs ({len(fails)}):", ""]
        for label, err in fails[:20]:
            w(f"  {label}: {err}")
            md.append(f"- {label}: {err}")

    w("")
    w("### machine")
    md += ["", "### Machine", ""]
    for line in args.info:
        w(line)
        md.append(f"- {line}")
    tail = (f"run folder (configs, each contender's log, traced runs): {args.run_dir};"
            f" harness took {time.monotonic() - began:.1f} s (the timed loop {load['seconds']:.1f} s)")
    w(tail)
    md.append(f"- {tail}")

    benchlib.write_report(args.report, out, md, {
        "knobs": k, "summaries": summaries, "load": load,
        "runs": {c.name: {"warmup": c.warmups, "measured": c.runs} for c in contenders},
        "traces": {n: [r["rec"] | {"phases": r["phases"]} for r in res]
                   for n, (res, _) in traces.items()}})
    note(f"wrote {args.report}")


# --- main ------------------------------------------------------------------------------

def main():
    args = benchlib.harness_args(__doc__, "bench/coldstart.sh", required=("--nginx", "--haproxy"),
                                 optional=("--floor", "--release", "--floor-musl",
                                           "--tls-cert", "--tls-key"))
    began = time.monotonic()
    k = {
        "runs": env_int("COLDSTART_RUNS", 50, 1),
        "warmup": env_int("COLDSTART_WARMUP", 3),
        "trace_runs": env_int("COLDSTART_TRACE_RUNS", 5),
        "poll_us": env_float("COLDSTART_POLL_US", 20),
        "timeout": env_float("COLDSTART_TIMEOUT", 5, 0.1),
        "targets": os.environ.get(
            "COLDSTART_TARGETS",
            "floor floor-musl sluice-w1 sluice-epoll sluice-tls sluice-default sluice-release nginx"
            " haproxy haproxy-noca").split(),
        "sluice_args": os.environ.get("SLUICE_ARGS", "").split(),
        "variants": os.environ.get("COLDSTART_VARIANTS", "").split(),
    }
    run_dir = os.path.abspath(args.run_dir)
    if not become_subreaper():
        note("could not become a child subreaper; orphans are left to init")
    if k["poll_us"] and not set_timer_slack_ns(1000):
        note("could not set the timer slack; sleeps between connects are ~50 µs longer")
    ports = benchlib.Ports()
    k["backend_port"] = ports.fresh()
    # Not part of any timed start: smaller than proxy.sh's, one connection at a time.
    backend = benchlib.start_hello_backend(args.nginx, run_dir, k["backend_port"], conns=4096,
                                           nofile=None, backlog=1024, keepalive_requests=False)
    note(f"backend nginx on 127.0.0.1:{k['backend_port']}")
    contenders = make_contenders(args, k, run_dir, k["backend_port"], k["targets"])
    for c in contenders:
        c.log = open(os.path.join(run_dir, f"{c.name}.log"), "ab")
    devnull = open(os.devnull, "rb")

    rounds = k["warmup"] + k["runs"]
    load = {"loadavg_before": loadavg()}
    busy0, times0, wall0 = benchlib.proc_stat_busy()["cpu"][0], os.times(), time.monotonic()
    note(f"{len(contenders)} contenders × ({k['warmup']} warm-up + {k['runs']} measured),"
         f" interleaved: " + ", ".join(c.name for c in contenders))
    for i in range(rounds):
        n = len(contenders)
        for j in range(n):
            c = contenders[(i + j) % n]
            rec = timed_run(c, ports.fresh(), k, devnull)
            (c.warmups if i < k["warmup"] else c.runs).append(rec)
        if not benchlib.pid_alive(backend.pid):
            raise HarnessError("the backend nginx died during the loop")
        if (i + 1) % 10 == 0 or i + 1 == rounds:
            note(f"round {i + 1}/{rounds}: " + ", ".join(
                f"{c.name} {c.runs[-1]['total_us'] / 1000:.2f} ms" if c.runs and c.runs[-1]["ok"]
                else f"{c.name} {'failed' if c.runs else 'warm-up'}" for c in contenders))

    busy1, times1, wall = benchlib.proc_stat_busy()["cpu"][0], os.times(), time.monotonic() - wall0
    clk = os.sysconf("SC_CLK_TCK")
    ours = sum(getattr(times1, f) - getattr(times0, f)
               for f in ("user", "system", "children_user", "children_system"))
    load.update(busy=(busy1 - busy0) / clk / wall, ours=ours / wall,
                loadavg_after=loadavg(), seconds=wall)
    load["other"] = max(0.0, load["busy"] - load["ours"])

    traces = {}
    for c in contenders:
        if c.name in ("sluice-w1", "sluice-epoll", "sluice-default") and k["trace_runs"]:
            traces[c.name] = trace_runs(c, k, ports, devnull, run_dir)
    report(args, k, contenders, traces, began, load)
    return 0


if __name__ == "__main__":
    benchlib.run_harness("coldstart.py", main, grace_s=0, after=reap_orphans)
