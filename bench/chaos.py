#!/usr/bin/env python3
"""Chaos benchmark driver for bench/chaos.sh (Python 3 stdlib only).

Starts N nginx backends (one process tree, config and pid file per port), sluice in front of
them with fast active checks and passive ejection, and a multi-threaded keep-alive client
that records every request's outcome with timestamps. For a bounded time it disturbs one
backend at a time: SIGKILL (down for a while, then restarted on the same port), a stall
(SIGSTOP: the kernel still accepts connections, nobody answers) and a spell of 500s (nginx
reloaded with a config that fails every request, /healthz included). Sluice's stderr is read
in a thread and each line timestamped on arrival, so every disturbance gets a time to
detection (sluice ejects the backend or marks it down) and a time to recovery (sluice puts
it back in rotation; the first response the client sees from it).

It is a measurement, not a test: failures are counted, never asserted. The exit code is
non-zero only when the harness itself breaks (a backend or sluice does not start, a restart
cannot bind its port, a process does not stop).

Usage: chaos.py --sluice BIN --nginx BIN --run-dir DIR --report FILE [--info TEXT]...
                [--command TEXT]
Knobs come from the environment; bench/chaos.sh --help lists them.
"""

import bisect
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402 - next to this file
from benchlib import HarnessError, env_float, env_int, started  # noqa: E402

note = benchlib.make_note("chaos")
ports = benchlib.Ports()  # below the ephemeral range: see Backend


# --- knobs -----------------------------------------------------------------------------

# Sluice's health and ejection flags: (flag, environment override, default).
SLUICE_KNOBS = [
    ("--health-path", "CHAOS_HEALTH_PATH", "/healthz"),
    ("--health-interval", "CHAOS_HEALTH_INTERVAL", "200ms"),
    ("--health-timeout", "CHAOS_HEALTH_TIMEOUT", "200ms"),
    ("--health-fall", "CHAOS_HEALTH_FALL", "2"),
    ("--health-rise", "CHAOS_HEALTH_RISE", "2"),
    ("--eject-after", "CHAOS_EJECT_AFTER", "3"),
    ("--eject-time", "CHAOS_EJECT_TIME", "1s"),
    ("--upstream-connect-timeout", "CHAOS_CONNECT_TIMEOUT", "500ms"),
    ("--upstream-response-timeout", "CHAOS_RESPONSE_TIMEOUT", "2s"),
]


def load_knobs():
    k = {
        "seconds": env_float("CHAOS_SECONDS", 30, 10),
        "backends": env_int("CHAOS_BACKENDS", 4, 2),
        "clients": env_int("CHAOS_CLIENTS", 12, 1),
        "client_timeout": env_float("CHAOS_CLIENT_TIMEOUT", 10, 0.1),
        "warmup": env_float("CHAOS_WARMUP", 2),
        "tail": env_float("CHAOS_TAIL", 4),
        "down_min": env_float("CHAOS_DOWN_MIN", 2),
        "down_max": env_float("CHAOS_DOWN_MAX", 4),
        "gap_min": env_float("CHAOS_GAP_MIN", 1),
        "gap_max": env_float("CHAOS_GAP_MAX", 2),
        "phases": os.environ.get("CHAOS_PHASES", "kill,stall,http500").split(","),
        "wrk_connections": env_int("CHAOS_WRK_CONNECTIONS", 0),
        "seed": env_int("CHAOS_SEED", int(time.time()) % 100000),
        "sluice_args": os.environ.get("SLUICE_ARGS", "").split(),
    }
    for p in k["phases"]:
        if p not in ("kill", "stall", "http500"):
            raise HarnessError(f"CHAOS_PHASES: unknown phase {p!r} (kill, stall, http500)")
    if "kill" not in k["phases"]:
        raise HarnessError("CHAOS_PHASES must include kill")
    if k["down_max"] < k["down_min"] or k["gap_max"] < k["gap_min"]:
        raise HarnessError("CHAOS_DOWN_MAX/CHAOS_GAP_MAX must be >= their _MIN")
    # An empty value leaves the flag out (CHAOS_HEALTH_PATH= : no active checks at all).
    k["flags"] = [(flag, os.environ.get(var, default)) for flag, var, default in SLUICE_KNOBS
                  if os.environ.get(var, default) != ""]
    return k


# --- backends: one nginx per port --------------------------------------------------------

class Backend:
    """One nginx (master + 1 worker) on a fixed port. `mode.conf` holds the locations, so a
    reload with another mode file switches between answering normally and failing."""

    def __init__(self, index, run_dir, nginx_bin):
        self.index = index
        self.name = f"b{index}"
        # A killed backend's port must still be free when it restarts a few seconds later;
        # inside the ephemeral range sluice's own outgoing connections (probes, new upstream
        # connections) could be given it meanwhile.
        self.port = ports.fresh()
        self.address = f"127.0.0.1:{self.port}"
        self.run_dir = run_dir
        self.nginx_bin = nginx_bin
        self.conf = os.path.join(run_dir, f"{self.name}.conf")
        self.mode_conf = os.path.join(run_dir, f"{self.name}.mode.conf")
        self.proc = None
        self.write_mode("ok")
        with open(self.conf, "w") as f:
            f.write(benchlib.nginx_conf(run_dir, self.name, 4096, benchlib.nginx_backend_http(
                self.port, f"include {self.mode_conf};", backlog=1024)))

    def write_mode(self, mode):
        body = {
            "ok": f"""location = /healthz {{ default_type text/plain; return 200 "ok\\n"; }}
location / {{ default_type text/plain; return 200 "{self.name}\\n"; }}
""",
            "http500": f"""location / {{
    default_type text/plain; return 500 "{self.name} failing\\n";
}}
""",
        }[mode]
        with open(self.mode_conf, "w") as f:
            f.write(body)

    def start(self):
        """Start nginx and wait until the port accepts. Returns the time it was ready."""
        self.proc = benchlib.start_nginx(self.nginx_bin, self.run_dir, self.name, self.conf)
        if benchlib.wait_port(self.port, 8, self.proc.pid) != 0:
            raise HarnessError(f"nginx {self.name} did not accept on {self.address}"
                               f" (see {self.run_dir}/{self.name}.error.log)")
        return time.monotonic()

    def kill(self):
        """SIGKILL master and worker at once: every socket closes as in a crash."""
        pids = benchlib.tree(self.proc.pid)
        benchlib.signal_pids(pids, signal.SIGKILL)
        self.proc.wait(timeout=5)
        started.remove(self.proc)
        deadline = time.monotonic() + 5
        while any(benchlib.pid_alive(p) for p in pids):  # the worker is not our child
            if time.monotonic() > deadline:
                raise HarnessError(f"nginx {self.name} survived SIGKILL")
            time.sleep(0.01)

    def stall(self, on):
        benchlib.signal_pids(benchlib.tree(self.proc.pid), signal.SIGSTOP if on else signal.SIGCONT)

    def reload(self, mode):
        """Switch mode with SIGHUP. Returns once the old worker has gone (new workers answer)."""
        old = set(benchlib.tree(self.proc.pid)) - {self.proc.pid}
        self.write_mode(mode)
        os.kill(self.proc.pid, signal.SIGHUP)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            workers = set(benchlib.tree(self.proc.pid)) - {self.proc.pid}
            if workers and not (workers & old):
                return
            time.sleep(0.01)
        raise HarnessError(f"nginx {self.name} did not reload within 5 s")


# --- sluice and its log ------------------------------------------------------------------

LINE_PATTERNS = [
    ("ejected", re.compile(r"backend (\S+) ejected for (\d+) ms: (.*)")),
    ("down", re.compile(r"backend (\S+) is down: active check failed \((.*)\)")),
    ("up", re.compile(r"backend (\S+) is up: active checks pass")),
    ("trial_ok", re.compile(r"backend (\S+): trial request succeeded, back in rotation")),
    ("trial_failed", re.compile(r"backend (\S+): trial request failed \((.*)\), ejected again")),
    ("eject_ended", re.compile(r"backend (\S+): ejection ended by (\d+) passing active checks")),
    ("eject_refused", re.compile(r"backend (\S+): \d+ consecutive failures .* not ejected")),
]


class Sluice:
    def __init__(self, argv, run_dir):
        self.argv = argv
        self.lines = []  # (monotonic time, text) in arrival order
        self.lock = threading.Lock()
        self.port = None
        self.listening = threading.Event()
        self.log = open(os.path.join(run_dir, "sluice.log"), "w")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                     stdout=open(os.path.join(run_dir, "sluice.stdout"), "wb"),
                                     stderr=subprocess.PIPE)
        started.append(self.proc)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.proc.stderr:
            now = time.monotonic()
            text = raw.decode("utf-8", "replace").rstrip("\n")
            with self.lock:
                self.lines.append((now, text))
            self.log.write(f"{now - self.t0:10.3f} {text}\n")
            self.log.flush()
            m = re.search(r"listening on (\S+):(\d+) \(", text)
            if m and self.port is None:
                self.port = int(m.group(2))
                self.listening.set()
        self.listening.set()  # EOF: wake a waiter, which sees port is None

    def wait_listening(self, timeout_s):
        self.listening.wait(timeout_s)
        if self.port is None:
            time.sleep(0.2)
            raise HarnessError(f"sluice printed no 'listening on' line (exit code "
                               f"{self.proc.poll()}): " + " | ".join(self.tail(10)))

    def tail(self, n):
        with self.lock:
            return [t for _, t in self.lines[-n:]]

    def wait_line(self, pattern, after, timeout_s):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                for t, text in self.lines:
                    if t >= after and pattern in text:
                        return text
            time.sleep(0.02)
        return None

    def transitions(self):
        """(time, kind, backend address, detail) for every health line."""
        out = []
        with self.lock:
            lines = list(self.lines)
        for t, text in lines:
            for kind, rx in LINE_PATTERNS:
                m = rx.search(text)
                if m:
                    out.append((t, kind, m.group(1), text.split("sluice: ", 1)[-1]))
                    break
        return out


# --- load --------------------------------------------------------------------------------

REQUEST = b"GET / HTTP/1.1\r\nHost: chaos.test\r\nUser-Agent: sluice-chaos\r\n\r\n"


class Client(threading.Thread):
    """Sequential keep-alive GETs on one connection; a new connection after a socket error,
    a timeout or `Connection: close` (sluice's own error responses carry it). Each request
    is recorded as (start, end, outcome): "ok:NAME" for a 200 naming its backend, else a
    failure kind."""

    def __init__(self, port, stop, timeout_s):
        super().__init__(daemon=True)
        self.port, self.stop, self.timeout_s = port, stop, timeout_s
        self.records = []
        self.connections = 0

    def run(self):
        sock, buf = None, b""
        while not self.stop.is_set():
            t0 = time.monotonic()
            try:
                if sock is None:
                    sock = socket.create_connection(("127.0.0.1", self.port),
                                                    timeout=self.timeout_s)
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    self.connections += 1
                    buf = b""
                sock.sendall(REQUEST)
                status, body, close, buf = read_response(sock, buf, t0 + self.timeout_s)
                if status == 200 and body.endswith(b"\n") and len(body) <= 8:
                    outcome = "ok:" + body.decode("ascii", "replace").strip()
                else:
                    detail = body.decode("utf-8", "replace").strip()[:80]
                    outcome = f"http {status}: {detail}"
                if close:
                    sock.close()
                    sock = None
            except Exception as e:  # noqa: BLE001 - every failure is a datum
                outcome = classify(e)
                if sock is not None:
                    sock.close()
                    sock = None
                if outcome.startswith("refused"):
                    time.sleep(0.05)  # sluice is not listening: do not spin
            self.records.append((t0, time.monotonic(), outcome))
        if sock is not None:
            sock.close()


class Protocol(Exception):
    pass


def read_response(sock, buf, deadline):
    def fill():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise socket.timeout("request deadline")
        sock.settimeout(remaining)
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError
        return chunk

    while b"\r\n\r\n" not in buf:
        buf += fill()
        if len(buf) > 65536:
            raise Protocol("response head over 64 KiB")
    head, _, buf = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise Protocol(f"bad status line {lines[0][:40]!r}")
    status = int(parts[1])
    length, close = None, parts[0] == "HTTP/1.0"
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name, value = name.strip().lower(), value.strip().lower()
        if name == "content-length":
            length = int(value)
        elif name == "transfer-encoding":
            raise Protocol("chunked response (not expected from these backends)")
        elif name == "connection":
            close = close or "close" in value
    if length is None:
        raise Protocol("response without Content-Length")
    while len(buf) < length:
        buf += fill()
    body, buf = buf[:length], buf[length:]
    if buf:
        raise Protocol("bytes after the response")
    return status, body, close, buf


def classify(e):
    if isinstance(e, ConnectionRefusedError):
        return "refused (sluice not accepting)"
    if isinstance(e, (ConnectionResetError, BrokenPipeError)):
        return "connection reset"
    if isinstance(e, (socket.timeout, TimeoutError)):
        return "timeout"
    if isinstance(e, EOFError):
        return "closed without response"
    if isinstance(e, Protocol):
        return f"other: {e}"
    return f"other: {type(e).__name__}: {e}"[:100]


def start_wrk(port, conns, seconds, run_dir):
    cmd = ["wrk", "-t1", f"-c{conns}", f"-d{int(seconds)}s", "--timeout", "10s", "--latency",
           f"http://127.0.0.1:{port}/"]
    out = open(os.path.join(run_dir, "wrk.txt"), "wb")
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    out.close()
    started.append(proc)
    return proc, " ".join(cmd[:-1]) + " http://127.0.0.1:PORT/"


# --- chaos schedule ----------------------------------------------------------------------

def plan_events(k, rng):
    """Sequential disturbances, one backend at a time: (start offset s, kind, backend index,
    length s). The first of each optional phase replaces the 2nd and 4th kill."""
    events, t = [], k["warmup"]
    while True:
        length = rng.uniform(k["down_min"], k["down_max"])
        if t + length + k["tail"] > k["seconds"]:
            break
        events.append([t, "kill", rng.randrange(k["backends"]), length])
        t += length + rng.uniform(k["gap_min"], k["gap_max"])
    optional = [p for p in ("stall", "http500") if p in k["phases"]]
    for slot, kind in zip((1, 3), optional):
        if slot < len(events):
            events[slot][1] = kind
    return events


def run_event(event, backend, t_start):
    """Carries out one disturbance; returns its record (monotonic times)."""
    offset, kind, _, length = event
    rec = {"kind": kind, "backend": backend.name, "address": backend.address,
           "planned_s": offset, "length_s": length}
    rec["start"] = time.monotonic()
    if kind == "kill":
        backend.kill()
    elif kind == "stall":
        backend.stall(True)
    else:
        backend.reload("http500")
    time.sleep(max(0.0, rec["start"] + length - time.monotonic()))
    rec["restore_begin"] = time.monotonic()
    if kind == "kill":
        rec["restore"] = backend.start()
    elif kind == "stall":
        backend.stall(False)
        rec["restore"] = time.monotonic()
    else:
        backend.reload("ok")
        rec["restore"] = time.monotonic()
    rec["offset"] = rec["start"] - t_start
    return rec


# --- analysis ----------------------------------------------------------------------------

def availability_changes(transitions, address):
    """(time, available, line) each time the backend's availability changes, from sluice's
    log: out of rotation while marked down by active checks or ejected; 'is up' also ends an
    ejection (sluice does that without an 'ejection ended' line)."""
    down = ejected = False
    out = []
    for t, kind, addr, text in transitions:
        if addr != address:
            continue
        was = not (down or ejected)
        if kind == "down":
            down = True
        elif kind == "up":
            down = ejected = False
        elif kind in ("ejected", "trial_failed"):
            ejected = True
        elif kind in ("trial_ok", "eject_ended"):
            ejected = False
        now = not (down or ejected)
        if now != was:
            out.append((t, now, text))
    return out


def analyse_event(rec, transitions, served, next_start):
    """Detection: first ejected/down line for the backend after the disturbance began (and
    before the next one on the same backend). Back: the first time at or after the restore
    at which sluice's log has it available again (negative: it was back before the restore
    and stayed). First served: the first 200 the client got from it after the restore."""
    addr = rec["address"]
    changes = availability_changes(transitions, addr)
    rec["detect_ms"] = rec["detect_line"] = None
    for t, kind, a, text in transitions:
        if a == addr and kind in ("ejected", "down") and rec["start"] <= t < next_start:
            rec["detect_ms"] = (t - rec["start"]) * 1000
            rec["detect_line"] = text
            break
    before = [c for c in changes if c[0] < rec["start"]]
    rec["out_at_start"] = bool(before) and not before[-1][1]
    out_t = rec["start"] if rec["out_at_start"] else None
    if out_t is None:
        outs = [c[0] for c in changes if not c[1] and rec["start"] <= c[0] < next_start]
        out_t = outs[0] if outs else None
    rec["back_ms"] = rec["back_line"] = None
    rec["window_end"] = rec["restore"] + 1
    if out_t is None:
        rec["back_line"] = "(never taken out of rotation)"
    else:
        after = [c for c in changes if c[0] > out_t]
        pre = [c for c in after if c[0] < rec["restore"]]
        post = [c for c in after if c[0] >= rec["restore"] and c[1]]
        if pre and pre[-1][1]:
            rec["back_ms"] = (pre[-1][0] - rec["restore"]) * 1000
            rec["back_line"] = pre[-1][2] + " (before the restore)"
        elif post:
            rec["back_ms"] = (post[0][0] - rec["restore"]) * 1000
            rec["back_line"] = post[0][2]
            rec["window_end"] = post[0][0] + 1
        else:
            rec["window_end"] = float("inf")
    times = served.get(rec["backend"], [])
    i = bisect.bisect_left(times, rec["restore"])
    rec["first_served_ms"] = (times[i] - rec["restore"]) * 1000 if i < len(times) else None
    return rec


def fmt_ms(v):
    if v is None:
        return "n/a"
    return f"{v:.1f} ms" if abs(v) < 10 else f"{v:.0f} ms"


def spread(label, values):
    vals = [v for v in values if v is not None]
    missing = len(values) - len(vals)
    miss = f" ({missing} of {len(values)} without a value)" if missing else ""
    if not vals:
        return f"{label}: n/a (n={len(values)}){miss}"
    return (f"{label}: median {statistics.median(vals):.0f} ms, min {min(vals):.0f} ms, "
            f"max {max(vals):.0f} ms (n={len(vals)}){miss}")


# --- the run -----------------------------------------------------------------------------

def start_all(k, sluice_bin, nginx_bin, run_dir):
    """Backends, then sluice; returns once sluice has answered one 200."""
    backends = [Backend(i, run_dir, nginx_bin) for i in range(k["backends"])]
    for b in backends:
        b.start()
    note("backends: " + ", ".join(f"{b.name}={b.address}" for b in backends))
    argv = [sluice_bin, "--listen", "127.0.0.1:0"]
    for b in backends:
        argv += ["--backend", b.address]
    for flag, value in k["flags"]:
        argv += [flag, value]
    argv += k["sluice_args"]
    sluice = Sluice(argv, run_dir)
    sluice.wait_listening(10)
    deadline = time.monotonic() + 5
    while True:
        try:
            with socket.create_connection(("127.0.0.1", sluice.port), timeout=2) as s:
                s.sendall(REQUEST)
                if read_response(s, b"", time.monotonic() + 2)[0] == 200:
                    break
        except Exception:  # noqa: BLE001 - retried until the deadline
            pass
        if time.monotonic() > deadline:
            raise HarnessError("sluice did not answer 200 within 5 s of starting: "
                               + " | ".join(sluice.tail(10)))
        time.sleep(0.1)
    return backends, sluice


def run_load(k, backends, sluice, run_dir):
    """Clients (and wrk) for k["seconds"], the planned disturbances inside that window."""
    events = plan_events(k, random.Random(k["seed"]))
    stop = threading.Event()
    clients = [Client(sluice.port, stop, k["client_timeout"]) for _ in range(k["clients"])]
    run = {"clients": clients, "wrk_cmd": None, "wrk_text": None}
    wrk = None
    run["t_start"] = time.monotonic()
    for c in clients:
        c.start()
    if k["wrk_connections"]:
        wrk, run["wrk_cmd"] = start_wrk(sluice.port, k["wrk_connections"], k["seconds"], run_dir)
    run["events"] = []
    for ev in events:
        time.sleep(max(0.0, run["t_start"] + ev[0] - time.monotonic()))
        b = backends[ev[2]]
        note(f"t={time.monotonic() - run['t_start']:5.1f}s {ev[1]} {b.name} for {ev[3]:.1f} s")
        run["events"].append(run_event(ev, b, run["t_start"]))
    time.sleep(max(0.0, run["t_start"] + k["seconds"] - time.monotonic()))
    stop.set()
    run["t_end"] = time.monotonic()
    for c in clients:
        c.join(timeout=max(0.1, run["t_end"] + k["client_timeout"] + 2 - time.monotonic()))
    run["stuck"] = sum(c.is_alive() for c in clients)
    if wrk is not None:
        try:
            wrk.wait(timeout=15)
        except subprocess.TimeoutExpired:
            wrk.kill()
        with open(os.path.join(run_dir, "wrk.txt"), errors="replace") as f:
            run["wrk_text"] = f.read()
    return run


def stop_sluice(sluice, backends):
    """SIGUSR2 for the stats line, then SIGTERM; its exit code and how long it took."""
    note("load stopped; SIGUSR2 to sluice for its stats, then SIGTERM")
    res = {"sockets": upstream_sockets(sluice.proc.pid, {b.port for b in backends})}
    t = time.monotonic()
    sluice.proc.send_signal(signal.SIGUSR2)
    res["stats"] = sluice.wait_line("sluice: stats ", t, 3) or "(no stats line within 3 s)"
    t = time.monotonic()
    sluice.proc.send_signal(signal.SIGTERM)
    try:
        res["rc"] = sluice.proc.wait(timeout=15)
        res["exit_s"] = time.monotonic() - t
    except subprocess.TimeoutExpired:
        res["rc"] = res["exit_s"] = None
    sluice.reader.join(timeout=2)
    res["exit"] = sluice.wait_line("sluice: exit ", t, 0.1) or "(no exit line)"
    return res


def upstream_sockets(pid, ports):
    """Sluice's TCP sockets to the backends, by state, from /proc: a cross-check of the
    upstream_connections_open counter in its stats line."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
    except OSError:
        return None
    names = {"01": "established", "08": "close-wait", "06": "time-wait", "02": "syn-sent",
             "04": "fin-wait1", "05": "fin-wait2", "09": "last-ack", "0B": "closing"}
    states = {}
    with open(f"/proc/{pid}/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            rem_port = int(fields[2].split(":")[1], 16)
            if fields[9] in inodes and rem_port in ports:
                state = names.get(fields[3], fields[3])
                states[state] = states.get(state, 0) + 1
    return states


# --- the report --------------------------------------------------------------------------

FIXED_KINDS = ["http 502", "http 503", "http 504", "http 500", "connection reset", "timeout",
               "closed without response"]


def count_by(items):
    out = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


def report_requests(w, k, run, records, backends, served):
    total = len(records)
    ok = sum(1 for r in records if r[2].startswith("ok:"))
    kinds = count_by(r[2] for r in records if not r[2].startswith("ok:"))
    lat = [(r[1] - r[0]) * 1000 for r in records]
    lat_ok = [(r[1] - r[0]) * 1000 for r in records if r[2].startswith("ok:")]
    w("### requests (Python clients)")
    w(f"requests total: {total}")
    w(f"requests per second: {total / (run['t_end'] - run['t_start']):.0f}")
    w(f"successes: {ok}")
    w(f"failures: {total - ok}")
    w(f"failure rate: {100 * (total - ok) / total:.3f}%" if total else "failure rate: n/a")
    for prefix in FIXED_KINDS:
        w(f"failures {prefix}: {sum(v for kk, v in kinds.items() if kk.startswith(prefix))}")
    other = sum(v for kk, v in kinds.items() if not kk.startswith(tuple(FIXED_KINDS)))
    w(f"failures other: {other}")
    w("failure detail: " + ("; ".join(f"{v} × {kk}" for kk, v in
                                      sorted(kinds.items(), key=lambda x: -x[1])) or "none"))
    w(f"client connections opened: {sum(c.connections for c in run['clients'])}")
    pct = benchlib.rounded_rank
    w(f"latency all requests: p50 {fmt_ms(pct(lat, 50))}, p99 {fmt_ms(pct(lat, 99))},"
      f" p99.9 {fmt_ms(pct(lat, 99.9))}, max {fmt_ms(max(lat) if lat else None)}")
    w(f"latency successes: p50 {fmt_ms(pct(lat_ok, 50))}, p99 {fmt_ms(pct(lat_ok, 99))},"
      f" max {fmt_ms(max(lat_ok) if lat_ok else None)}")
    w(f"requests slower than 1 s: {sum(1 for x in lat if x > 1000)}")
    per = [0] * (int(run["t_end"] - run["t_start"]) + 1)
    fails = [0] * len(per)
    for t0, t1, outcome in records:
        s = min(len(per) - 1, max(0, int(t1 - run["t_start"])))
        per[s] += 1
        fails[s] += not outcome.startswith("ok:")
    per, fails = per[:-1] or per, fails[:-1] or fails  # the last bucket is the wind-down
    w("completed per second: " + " ".join(str(n) for n in per))
    if any(fails):
        w("failed per second: " + " ".join(str(n) for n in fails))
    w(f"seconds with no completed request: {sum(1 for n in per if n == 0)}")
    for b in backends:
        w(f"served by {b.name} ({b.address}): {len(served.get(b.name, []))}")
    unknown = {n: len(v) for n, v in served.items() if n not in {b.name for b in backends}}
    if unknown:
        w(f"served by unknown names: {unknown}")
    if run["stuck"]:
        w(f"client threads still blocked at the end: {run['stuck']}")
    if run["wrk_text"] is not None:
        try:
            p = benchlib.parse_wrk(run["wrk_text"])
            w(f"wrk: {p['requests']} requests, {p['rps']:.0f} req/s, p50"
              f" {p['p50_us'] / 1000:.1f} ms, p99 {p['p99_us'] / 1000:.1f} ms, socket errors"
              f" {p['socket_errors']}, non-2xx/3xx {p['non2xx']}")
        except ValueError as e:
            w(f"wrk: unparsable output ({e}); see wrk.txt")


def report_events(w, analysed, records):
    w("### disturbances (detection: from its start; back, first served: from its end)")
    for i, d in enumerate(analysed, 1):
        w(f"event {i}: t={d['offset']:.1f}s {d['kind']} {d['backend']} ({d['address']}) for"
          f" {d['restore'] - d['start']:.1f} s; detected {fmt_ms(d['detect_ms'])}"
          f" [{d['detect_line'] or 'no ejected/down line'}]; back {fmt_ms(d['back_ms'])}"
          f" [{d['back_line'] or 'not back by the end'}]; first served"
          f" {fmt_ms(d['first_served_ms'])}"
          + (f"; restart took {(d['restore'] - d['restore_begin']) * 1000:.0f} ms"
             if d["kind"] == "kill" else "")
          + ("; was already out of rotation when it began" if d["out_at_start"] else ""))
        fails = count_by(r[2] for r in records
                         if d["start"] <= r[1] < d["window_end"] and not r[2].startswith("ok:"))
        w(f"event {i} failures from its start to 1 s after back: {sum(fails.values())}"
          + (" (" + "; ".join(f"{v} × {kk}" for kk, v in fails.items()) + ")" if fails else ""))
    for kind, cause, end in (("kill", "kill", "restart"), ("stall", "SIGSTOP", "SIGCONT"),
                             ("http500", "first 500s", "end of 500s")):
        sel = [d for d in analysed if d["kind"] == kind]
        if sel:
            w(spread(f"{kind}: {cause} -> first detection", [d["detect_ms"] for d in sel]))
            w(spread(f"{kind}: {end} -> back in rotation (sluice log)",
                     [d["back_ms"] for d in sel]))
            w(spread(f"{kind}: {end} -> first response served by it",
                     [d["first_served_ms"] for d in sel]))


def report_sluice(w, transitions, analysed, t_start, stopped, line_count):
    w("### sluice")
    counts = count_by(kind for _, kind, _, _ in transitions)
    w("log lines: " + ", ".join(f"{kk} {counts.get(kk, 0)}" for kk, _ in LINE_PATTERNS))
    # Sluice acting against a backend the harness was not disturbing at the time.
    unexplained = [f"t={t - t_start:.2f}s {text}" for t, kind, addr, text in transitions
                   if kind in ("ejected", "down", "trial_failed", "eject_refused")
                   and not any(d["address"] == addr and d["start"] <= t <= d["window_end"]
                               for d in analysed)]
    w(f"health lines outside any disturbance window: {len(unexplained)}")
    for u in unexplained[:10]:
        w(f"  {u}")
    w(f"stats line (SIGUSR2): {stopped['stats']}")
    socks = stopped["sockets"]
    w("upstream sockets sluice held at SIGUSR2 (/proc): " + (
        "unreadable" if socks is None else f"{sum(socks.values())}"
        + (" (" + ", ".join(f"{kk} {v}" for kk, v in sorted(socks.items())) + ")" if socks else "")))
    w(f"exit line: {stopped['exit']}")
    if stopped["rc"] is None:
        w("SIGTERM: sluice did not exit within 15 s (killed)")
    else:
        w(f"SIGTERM: exit code {stopped['rc']} after {stopped['exit_s']:.2f} s"
          + ("" if stopped["rc"] == 0 else "  <-- expected 0"))
    w(f"sluice stderr lines: {line_count}")


def report(args, k, backends, sluice, run, stopped, began):
    records = sorted(r for c in run["clients"] for r in c.records)
    served = {}
    for t0, t1, outcome in records:
        if outcome.startswith("ok:"):
            served.setdefault(outcome[3:], []).append(t1)
    for v in served.values():
        v.sort()
    transitions = sluice.transitions()
    analysed = []
    for i, rec in enumerate(run["events"]):
        nxt = [d["start"] for d in run["events"][i + 1:] if d["backend"] == rec["backend"]]
        analysed.append(analyse_event(rec, transitions, served, nxt[0] if nxt else float("inf")))

    out = []
    w = out.append
    w("## sluice chaos benchmark")
    w("")
    w(f"command: {args.command}")
    w(f"sluice command: {' '.join(sluice.argv)}")
    w(f"backends: {len(backends)} × nginx (1 worker, keep-alive; GET /healthz -> 200 'ok',"
      f" other paths -> 200 'bN'): " + ", ".join(f"{b.name}={b.address}" for b in backends))
    w(f"load: {k['clients']} Python client threads, sequential keep-alive GET /, per-request"
      f" timeout {k['client_timeout']:g} s"
      + (f"; plus `{run['wrk_cmd']}`" if run["wrk_cmd"] else "; no wrk"))
    phases = count_by(d["kind"] for d in analysed)
    w(f"chaos: {k['seconds']:g} s of load, seed {k['seed']} (CHAOS_SEED replays the schedule);"
      " phases that ran: " + (", ".join(f"{kk} ×{n}" for kk, n in phases.items()) or "none"))
    w("")
    report_requests(w, k, run, records, backends, served)
    w("")
    report_events(w, analysed, records)
    w("")
    report_sluice(w, transitions, analysed, run["t_start"], stopped, len(sluice.lines))
    w("")
    w("### machine")
    for line in args.info:
        w(line)
    w(f"run folder (timestamped sluice.log, nginx configs and logs): {args.run_dir}")
    w(f"harness took {time.monotonic() - began:.0f} s (load {run['t_end'] - run['t_start']:.1f} s)")
    benchlib.write_report(args.report, out)
    note(f"wrote {args.report}")


def main():
    args = benchlib.harness_args(__doc__, "bench/chaos.sh", required=("--nginx",))
    began = time.monotonic()
    k = load_knobs()
    run_dir = os.path.abspath(args.run_dir)
    backends, sluice = start_all(k, args.sluice, args.nginx, run_dir)
    note(f"sluice on 127.0.0.1:{sluice.port}; {k['clients']} clients for {k['seconds']:g} s,"
         f" seed {k['seed']}")
    run = run_load(k, backends, sluice, run_dir)
    stopped = stop_sluice(sluice, backends)
    report(args, k, backends, sluice, run, stopped, began)
    return 0


if __name__ == "__main__":
    benchlib.run_harness("chaos.py", main, grace_s=3)
