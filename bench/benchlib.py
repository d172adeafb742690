#!/usr/bin/env python3
"""Shared helpers of the bench scripts (Python 3 stdlib only).

Imported by the drivers chaos.py, coldstart.py and memory.py: processes and their cleanup,
free ports, nginx and HAProxy configs, a driver's knobs, notes and exit, sluice's log lines,
medians and percentiles, tables and report files. Run as a command by proxy.sh, whose
subcommands these are (all print to stdout, errors to stderr, non-zero exit on failure):

  freeport                          a free TCP port on 127.0.0.1
  wait-port PORT TIMEOUT_S PID      wait until 127.0.0.1:PORT accepts; fail early if PID dies
  smoke PORT                        GET http://127.0.0.1:PORT/ must answer 200 "hello\\n"
  smoke-large PORT FILE             GET /1m must answer 200 with FILE's bytes, twice on one
                                    connection
  tree PID                          PID and all its descendants, one per line
  cputicks PID...                   per PID: utime+stime (clock ticks) summed over its process
                                    tree ('-' passes through), space-separated
  conf backend RUN_DIR PORT         proxy.sh's configs: the nginx backend, the nginx proxy
  conf nginx RUN_DIR PORT BPORT     and the HAProxy proxy in front of 127.0.0.1:BPORT
  conf haproxy RUN_DIR PORT BPORT   (temp folders are made in RUN_DIR)
  measure ...                       one measured wrk run -> one JSON line (see measure())
  syscalls ...                      system calls and io_uring operations of a proxy during
                                    one wrk run -> one JSON line (see syscalls())
  report RESULTS_JSONL META_JSON    print the results table and write the markdown file

CPU accounting: /proc/PID/stat of a thread-group leader already sums all of its threads,
so a threaded proxy (sluice, haproxy with nbthread) is covered by its own line, and a
forking proxy (nginx master + workers) by summing the tree. Processes that exit during a
measurement would be missed; none of the peers fork or exit in steady state.
"""

import argparse
import http.client
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import threading
import time


# --- processes -------------------------------------------------------------------------

def _stat_fields(pid):
    """Fields of /proc/PID/stat after the command name (which may hold spaces)."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        data = f.read().decode("ascii", "replace")
    return data[data.rindex(")") + 2:].split()


def _children_map():
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            ppid = int(_stat_fields(name)[1])  # field 4 overall: ppid
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    return children


def tree(pid):
    children = _children_map()
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cputicks(pid):
    total = 0
    for p in tree(pid):
        try:
            f = _stat_fields(p)
        except OSError:
            continue  # exited between listing and reading
        total += int(f[11]) + int(f[12])  # fields 14, 15 overall: utime, stime
    return total


def pid_alive(pid):
    try:
        f = _stat_fields(pid)
    except OSError:
        return False
    return f[0] != "Z"


def signal_pids(pids, sig):
    for p in pids:
        try:
            os.kill(p, sig)
        except ProcessLookupError:
            pass


started = []  # a driver's long-lived Popens (backends, proxies, wrk), for cleanup()


def stop_tree(proc, grace_s):
    """SIGCONT + SIGTERM the process tree (a stopped process must run to handle SIGTERM),
    wait up to grace_s (0: SIGKILL at once), SIGKILL what is left and wait until every
    process of it is gone (the grandchildren are not ours to wait for). True if all went."""
    if proc.poll() is not None:
        return True
    pids = tree(proc.pid)
    if grace_s:
        signal_pids(pids, signal.SIGCONT)
        signal_pids(pids, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
        proc.poll()
        time.sleep(0.02)
    signal_pids([p for p in pids if pid_alive(p)], signal.SIGKILL)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return False
    deadline = time.monotonic() + 5
    while any(pid_alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def cleanup(grace_s):
    for proc in reversed(started):
        stop_tree(proc, grace_s)


# --- network ---------------------------------------------------------------------------

def freeport():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def ephemeral_range():
    """The kernel's ephemeral port range (low, high)."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low, high = map(int, f.read().split())
    return low, high


class Ports:
    """Fresh ports on 127.0.0.1 *below* the ephemeral range, never the same one twice. Below
    it, no outgoing connection (a driver's clients, a proxy's upstream connections and
    probes) is handed the port meanwhile, so it is still free when a server binds it, or
    binds it again after a restart. Each is checked free with a bind() without
    SO_REUSEADDR, which also fails while a TIME_WAIT socket holds it."""

    def __init__(self):
        ephemeral_low = ephemeral_range()[0]
        self.low = 10000 if ephemeral_low > 12000 else 1024
        self.high = ephemeral_low - 1
        self.used = set()

    def fresh(self):
        for _ in range(500):
            port = random.randint(self.low, self.high)
            if port in self.used:
                continue
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            finally:
                s.close()
            self.used.add(port)
            return port
        raise HarnessError("no free port below the ephemeral range")


def wait_port(port, timeout_s, pid):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if pid and not pid_alive(pid):
            print(f"process {pid} exited before 127.0.0.1:{port} accepted", file=sys.stderr)
            return 1
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return 0
        except OSError:
            time.sleep(0.02)
    print(f"timed out after {timeout_s}s waiting for 127.0.0.1:{port}", file=sys.stderr)
    return 1


def smoke(port):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=3)
        c.request("GET", "/", headers={"Host": f"127.0.0.1:{port}"})
        r = c.getresponse()
        body = r.read()
        # Second request on the same connection: the proxy must keep the client alive.
        c.request("GET", "/", headers={"Host": f"127.0.0.1:{port}"})
        r2 = c.getresponse()
        body2 = r2.read()
        c.close()
    except Exception as e:  # noqa: BLE001 - any failure is a failed smoke test
        print(f"smoke test on :{port} failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    if r.status != 200 or body != b"hello\n" or r2.status != 200 or body2 != b"hello\n":
        print(f"smoke test on :{port}: got {r.status} {body[:80]!r}, then "
              f"{r2.status} {body2[:80]!r}; want 200 b'hello\\n' twice", file=sys.stderr)
        return 1
    return 0


def client_tls():
    """The HTTPS benchmarks' client side: TLS 1.2+, no certificate check (the certificates
    are self-signed, made by common.sh's make_certs)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    return ctx


def smoke_large(port, path):
    """GET /1m twice on one connection: 200 and exactly the bytes of the file at PATH."""
    with open(path, "rb") as f:
        want = f.read()
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        got = []
        for _ in range(2):
            c.request("GET", "/1m", headers={"Host": f"127.0.0.1:{port}"})
            r = c.getresponse()
            got.append((r.status, r.read()))
        c.close()
    except Exception as e:  # noqa: BLE001 - any failure is a failed smoke test
        print(f"large smoke test on :{port} failed: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    for status, body in got:
        if status != 200 or body != want:
            print(f"large smoke test on :{port}: got {status} and {len(body)} bytes"
                  f" ({'same' if body == want else 'different'} content); want 200 and the"
                  f" {len(want)} bytes of {path}", file=sys.stderr)
            return 1
    return 0


# --- nginx and HAProxy configs ---------------------------------------------------------
# The defaults are proxy.sh's configs; the other drivers pass what they do differently.

NGINX_TEMP = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
NGINX_HELLO = 'location / { default_type text/plain; return 200 "hello\\n"; }'
# nginx as a proxy, matched to sluice's defaults: client keep-alive 60 s (a client
# connection lives for the whole run), upstream keepalive 64 kept 30 s
# (--client-idle-timeout, --upstream-keepalive, --upstream-idle-timeout); the client's Host
# kept and X-Forwarded-For replaced (no trusted proxies), as sluice does.
NGINX_CLIENT_KEEPALIVE = ("keepalive_timeout 60s;", "keepalive_requests 100000000;")
NGINX_UPSTREAM_KEEPALIVE = ("keepalive_requests 100000000;", "keepalive_timeout 30s;")
NGINX_PROXY_TIMEOUTS = ("proxy_connect_timeout 5s;", "proxy_read_timeout 60s;")
HAPROXY_HTTP_TIMEOUTS = ("timeout http-request 10s", "timeout http-keep-alive 60s")
HAPROXY_FORWARDED = ("http-request set-header X-Forwarded-Proto http",
                     "http-request set-header X-Forwarded-Host %[req.hdr(host)]")


def _lines(lines, indent):
    return "".join(f"{' ' * indent}{x}\n" for x in lines)


def nginx_conf(run_dir, name, conns, http, nofile=None):
    """A whole nginx config: master + 1 worker in the foreground, pid file and error log
    RUN_DIR/NAME.pid and .error.log, temp files in RUN_DIR/NAME.tmp (made here), access log
    off; `http` is the rest of the http block. As root, the worker stays root (it would drop
    to nobody and could not write the run folder)."""
    tmp = f"{run_dir}/{name}.tmp"
    for k in NGINX_TEMP:
        os.makedirs(f"{tmp}/{k}", exist_ok=True)
    head = ["user root;" if os.getuid() == 0 else "", "daemon off;", "master_process on;",
            "worker_processes 1;", f"pid {run_dir}/{name}.pid;",
            f"error_log {run_dir}/{name}.error.log warn;"]
    if nofile:
        head.append(f"worker_rlimit_nofile {nofile};")
    head += [f"events {{ worker_connections {conns}; }}", "http {"]
    return (_lines(head, 0) + _lines((f"{k}_temp_path {tmp}/{k};" for k in NGINX_TEMP), 4)
            + "    access_log off;\n" + http + "}\n")


def nginx_backend_http(port, body=NGINX_HELLO, backlog=4096, keepalive_requests=True):
    """The http block of a backend: keep-alive clients, one server on 127.0.0.1:PORT."""
    return (_lines(["keepalive_timeout 300s;"]
                   + (["keepalive_requests 100000000;"] if keepalive_requests else []), 4)
            + f"    server {{\n        listen 127.0.0.1:{port} backlog={backlog};\n"
            + f"        {body}\n    }}\n")


def nginx_proxy_http(port, backend, client=NGINX_CLIENT_KEEPALIVE,
                     upstream=NGINX_UPSTREAM_KEEPALIVE, location=NGINX_PROXY_TIMEOUTS,
                     backlog=4096, tls=()):
    """The http block of nginx as a keep-alive reverse proxy to BACKEND (host:port) on
    127.0.0.1:PORT, forwarding the client's Host and X-Forwarded-* as sluice does. `tls`:
    ssl_* lines, and the listener gets `ssl` (bench/tls.sh)."""
    listen = (f"127.0.0.1:{port}" + (f" backlog={backlog}" if backlog else "")
              + (" ssl" if tls else ""))
    return (_lines(client, 4) + "    upstream backend {\n"
            + _lines([f"server {backend};", "keepalive 64;"] + list(upstream), 8)
            + f"    }}\n    server {{\n        listen {listen};\n" + _lines(tls, 8)
            + "        location / {\n"
            + _lines(["proxy_pass http://backend;",
                      "proxy_http_version 1.1;",
                      'proxy_set_header Connection "";',
                      "proxy_set_header Host $http_host;",
                      "proxy_set_header X-Forwarded-For $remote_addr;",
                      "proxy_set_header X-Forwarded-Proto $scheme;",
                      "proxy_set_header X-Forwarded-Host $http_host;"] + list(location), 12)
            + "        }\n    }\n")


def haproxy_conf(port, backend, maxconn, global_lines=(), defaults=HAPROXY_HTTP_TIMEOUTS,
                 frontend=HAPROXY_FORWARDED, bind_extra=""):
    """HAProxy in one process and thread as a keep-alive reverse proxy to BACKEND
    (host:port) on 127.0.0.1:PORT, adding X-Forwarded-For; `bind_extra` ends the bind line
    (`ssl crt FILE`: bench/tls.sh)."""
    return ("global\n" + _lines(["nbthread 1", f"maxconn {maxconn}"] + list(global_lines), 4)
            + "\ndefaults\n"
            + _lines(["mode http", "option http-keep-alive", "http-reuse always",
                      "option forwardfor", "timeout connect 5s", "timeout client 60s",
                      "timeout server 60s"] + list(defaults), 4)
            + "\nfrontend fe\n"
            + _lines([f"bind 127.0.0.1:{port}{bind_extra}"] + list(frontend) + ["default_backend be"], 4)
            + f"\nbackend be\n    server s1 {backend}\n")


# The large-body scenario's response: a 1 MiB file, sent by the backend with sendfile (the
# least CPU on the load side) and a Content-Length, so every proxy relays a framed body.
LARGE_BODY_BYTES = 1 << 20


def nginx_large_location(run_dir):
    return ("location = /1m { default_type application/octet-stream; sendfile on;"
            f" alias {run_dir}/1m.bin; }}")


def proxy_sh_conf(kind, run_dir, port, backend_port=None):
    """proxy.sh's configs (`conf` subcommand)."""
    backend = f"127.0.0.1:{backend_port}"
    if kind == "backend":
        body = NGINX_HELLO + "\n        " + nginx_large_location(run_dir)
        return nginx_conf(run_dir, "backend", 8192, nginx_backend_http(port, body), nofile=16384)
    if kind == "nginx":
        return nginx_conf(run_dir, "nginx", 8192, nginx_proxy_http(port, backend), nofile=16384)
    if kind == "haproxy":
        return haproxy_conf(port, backend, 8192,
                            ["# no log lines: nginx and sluice run without access logs too"])
    raise ValueError(f"unknown config {kind!r} (backend, nginx, haproxy)")


def start_pinned(p, run_dir, cpus):
    """Starts proxy `p` (its .key, .argv, .port) under `taskset -c CPUS`, its output in
    RUN_DIR/KEY.log; sets p.proc, and p.fail when it does not listen within 10 s. True when
    it listens."""
    with open(os.path.join(run_dir, f"{p.key}.log"), "ab") as log:
        p.proc = subprocess.Popen(["taskset", "-c", cpus] + p.argv, stdin=subprocess.DEVNULL,
                                  stdout=log, stderr=log, start_new_session=True)
    started.append(p.proc)
    if wait_port(p.port, 10, p.proc.pid) != 0:
        p.fail = f"did not listen (see {run_dir}/{p.key}.log)"
        return False
    return True


def start_nginx(nginx_bin, run_dir, name, conf):
    """`nginx -e RUN_DIR/NAME.error.log -p RUN_DIR/ -c CONF`, its output appended to
    RUN_DIR/NAME.log; added to `started`."""
    log = open(os.path.join(run_dir, f"{name}.log"), "ab")
    proc = subprocess.Popen([nginx_bin, "-e", os.path.join(run_dir, f"{name}.error.log"),
                             "-p", run_dir + "/", "-c", conf],
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    log.close()
    started.append(proc)
    return proc


def start_hello_backend(nginx_bin, run_dir, port, conns=8192, nofile=16384, backlog=4096,
                        keepalive_requests=True):
    """The backend the proxies forward to: nginx answering `200 "hello\\n"` on
    127.0.0.1:PORT (RUN_DIR/backend.conf); returns once it has answered the smoke test."""
    conf = os.path.join(run_dir, "backend.conf")
    with open(conf, "w") as f:
        f.write(nginx_conf(run_dir, "backend", conns,
                           nginx_backend_http(port, NGINX_HELLO, backlog, keepalive_requests),
                           nofile))
    proc = start_nginx(nginx_bin, run_dir, "backend", conf)
    if wait_port(port, 10, proc.pid) != 0 or smoke(port) != 0:
        raise HarnessError(f"the backend nginx did not start (see {run_dir}/backend.error.log)")
    return proc


# --- a driver: arguments, knobs, notes, exit -------------------------------------------

class HarnessError(Exception):
    """The harness could not do its job; the figures would mean nothing."""


def harness_args(doc, command, required=(), optional=()):
    """A driver's arguments: --sluice, --run-dir, --report and `required` (all required),
    `optional` (default ''), --info TEXT (repeated: the machine section) and --command."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawTextHelpFormatter)
    for a in ("--sluice", "--run-dir", "--report") + tuple(required):
        ap.add_argument(a, required=True)
    for a in optional:
        ap.add_argument(a, default="")
    ap.add_argument("--info", action="append", default=[])
    ap.add_argument("--command", default=command)
    return ap.parse_args()


def env_int(name, default, low=0):
    text = os.environ.get(name, str(default))
    if not text.isdigit() or int(text) < low:
        raise HarnessError(f"{name} must be a whole number >= {low}, got {text!r}")
    return int(text)


def env_float(name, default, low=0.0):
    text = os.environ.get(name, str(default))
    try:
        value = float(text)
    except ValueError:
        raise HarnessError(f"{name} must be a number, got {text!r}") from None
    if value < low:
        raise HarnessError(f"{name} must be >= {low}, got {text!r}")
    return value


def make_note(tag):
    """note(msg): a progress line `[TAG HH:MM:SS] msg` on stderr, as the shell scripts log."""
    def note(msg):
        print(f"[{tag} {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)
    return note


def _interrupted(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


def run_harness(name, main, grace_s, after=None):
    """Runs a driver's main() and exits with its code: 1 after a HarnessError, 130 after
    SIGINT or SIGTERM. Whatever happens, every process in `started` is stopped (grace_s
    after SIGTERM, then SIGKILL), then after() runs."""
    signal.signal(signal.SIGTERM, _interrupted)
    rc = 1
    try:
        rc = main()
    except HarnessError as e:
        print(f"{name}: harness failed: {e}", file=sys.stderr)
    except KeyboardInterrupt as e:
        print(f"{name}: interrupted ({e or 'SIGINT'})", file=sys.stderr)
        rc = 130
    finally:
        cleanup(grace_s)
        if after:
            after()
    sys.exit(rc)


# --- sluice's log lines ----------------------------------------------------------------

# sluice starts each stderr line with an RFC 3339 UTC timestamp: `2026-11-23T14:48:03.123Z `.
STAMP_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (?=sluice: )")


def log_lines(path, offset, prefix):
    """The lines of the log file PATH from byte OFFSET on that start with PREFIX once their
    timestamp is set aside (returned without it)."""
    with open(path, "rb") as f:
        f.seek(offset)
        text = f.read().decode("utf-8", "replace")
    lines = (STAMP_RE.sub("", ln, count=1) for ln in text.splitlines())
    return [ln for ln in lines if ln.startswith(prefix)]


def wait_log_line(path, offset, prefix, timeout_s=3, after=None, poll_s=0.02):
    """The last line of PATH (from byte OFFSET) that starts with PREFIX, as soon as there
    is one (more than `after` of them, when given); None if there is none by timeout_s.
    Checks at least once, so timeout_s=0 only looks."""
    deadline = time.monotonic() + timeout_s
    while True:
        lines = log_lines(path, offset, prefix)
        if lines and (after is None or len(lines) > after):
            return lines[-1]
        if time.monotonic() > deadline:
            return None
        time.sleep(poll_s)


# --- figures, tables, report files -----------------------------------------------------

def median(values):
    """The median of the values that are not None; None if there are none."""
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def nearest_rank(sorted_values, q):
    """The q-th percentile by nearest rank (the smallest value with at least q% of the
    values at or below it) of an already sorted list; None if empty. coldstart.py's p90."""
    if not sorted_values:
        return None
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def rounded_rank(values, q):
    """The q-th percentile as the value at index round(q% × (n − 1)) of the sorted values;
    None if empty. chaos.py's latency percentiles."""
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def text_table(header, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    fmt = lambda row: "  ".join(str(x).ljust(w) if i == 0 else str(x).rjust(w)  # noqa: E731
                                for i, (x, w) in enumerate(zip(row, widths)))
    return "\n".join([fmt(header), "  ".join("-" * w for w in widths)] + [fmt(r) for r in rows])


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    return "\n".join(lines + ["| " + " | ".join(str(x) for x in r) + " |" for r in rows])


def write_report(path, text, md=None, data=None):
    """Prints the report's lines `text`; writes `md` (markdown lines; else the text) to
    PATH and `data`, if given, as JSON to PATH with .json for its .md ending."""
    print("\n".join(text) + "\n", flush=True)
    with open(path, "w") as f:
        f.write("\n".join(text if md is None else md) + "\n")
    if data is not None:
        with open(path[:-3] + ".json", "w") as f:
            json.dump(data, f, indent=1)


# --- wrk output ------------------------------------------------------------------------

_UNITS_US = {"us": 1.0, "ms": 1e3, "s": 1e6, "m": 60e6, "h": 3600e6}
_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}


def _dur_us(text):
    m = re.fullmatch(r"([0-9.]+)(us|ms|s|m|h)", text)
    if not m:
        raise ValueError(f"unparsable wrk duration {text!r}")
    return float(m.group(1)) * _UNITS_US[m.group(2)]


def parse_wrk(text):
    """Requests/s, total requests, duration, p50/p99 (µs), socket errors, non-2xx/3xx."""
    out = {}
    m = re.search(r"^Requests/sec:\s+([0-9.]+)([kMG]?)\s*$", text, re.M)
    if not m:
        raise ValueError("no Requests/sec line in wrk output")
    out["rps"] = float(m.group(1)) * _SI[m.group(2)]
    m = re.search(r"^\s*(\d+) requests in ([0-9.]+(?:us|ms|s|m|h)),", text, re.M)
    if not m:
        raise ValueError("no 'N requests in T' line in wrk output")
    out["requests"] = int(m.group(1))
    out["duration_s"] = _dur_us(m.group(2)) / 1e6
    for pct in ("50", "75", "90", "99"):
        m = re.search(rf"^\s+{pct}(?:\.000)?%\s+([0-9.]+(?:us|ms|s|m|h))\s*$", text, re.M)
        if not m:
            raise ValueError(f"no {pct}% latency line (was --latency given?)")
        out[f"p{pct}_us"] = _dur_us(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    out["socket_errors"] = sum(int(x) for x in m.groups()) if m else 0
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    out["non2xx"] = int(m.group(1)) if m else 0
    return out


def proc_stat_busy():
    """Per-CPU and total (busy, steal) jiffies from /proc/stat. Busy excludes idle, iowait
    and steal; guest time is already inside user."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            if not line.startswith("cpu"):
                break
            name, *vals = line.split()
            v = [int(x) for x in vals] + [0] * 10
            user, nice, system, _idle, _iowait, irq, softirq, steal = v[:8]
            out[name] = (user + nice + system + irq + softirq, steal)
    return out


def measure(argv):
    """measure TARGET ROUND ATTEMPT OUTFILE PROXY_PID BACKEND_PID TIMEOUT_S LOAD_CPUS -- WRK ARGS...

    Runs wrk (under `taskset -c LOAD_CPUS` unless LOAD_CPUS is '-') with its output in
    OUTFILE, reads the CPU time of the proxy tree (PROXY_PID '-' for none), the backend
    tree (BACKEND_PID '-' for none), wrk itself (rusage from wait4) and the whole machine (/proc/stat) around it, and
    prints one JSON line. Whatever busy CPU is left after subtracting proxy, backend and
    wrk is 'foreign': another program competing for the machine during the run."""
    sep = argv.index("--")
    target, rnd, attempt, outfile, proxy_pid, backend_pid, timeout_s, load_cpus = argv[:sep]
    cmd = argv[sep + 1:]
    if load_cpus != "-":
        cmd = ["taskset", "-c", load_cpus] + cmd
    clk = os.sysconf("SC_CLK_TCK")
    # BACKEND_PID '-': a server that answers itself (bench/js.sh), measured as the proxy.
    backend = [int(backend_pid)] if backend_pid != "-" else []
    pids = backend + ([int(proxy_pid)] if proxy_pid != "-" else [])

    def ticks():
        return [cputicks(p) for p in pids]

    t_before, s_before = ticks(), proc_stat_busy()
    w0 = time.monotonic()
    with open(outfile, "wb") as out:
        child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    timer = threading.Timer(float(timeout_s), child.kill)
    timer.start()
    _, status, ru = os.wait4(child.pid, 0)
    timer.cancel()
    child.returncode = os.waitstatus_to_exitcode(status)
    wall_s = time.monotonic() - w0
    t_after, s_after = ticks(), proc_stat_busy()

    rec = {"target": target, "round": int(rnd), "attempt": int(attempt), "wall_s": wall_s,
           "wrk_exit": child.returncode}
    with open(outfile, errors="replace") as f:
        text = f.read()
    try:
        rec.update(parse_wrk(text))
    except ValueError as e:
        rec["error"] = f"{e} (wrk exit {child.returncode})"
        print(json.dumps(rec))
        return 0
    n = max(rec["requests"], 1)
    dur = max(rec["duration_s"], 1e-9)
    backend_s = 0.0
    if backend:
        backend_s = (t_after[0] - t_before[0]) / clk
        rec["backend_cpu_us_per_req"] = backend_s * 1e6 / n
    proxy_s = 0.0
    if proxy_pid != "-":
        proxy_s = (t_after[-1] - t_before[-1]) / clk
        rec["proxy_cpu_us_per_req"] = proxy_s * 1e6 / n
        rec["proxy_busy"] = proxy_s / dur
    wrk_s = ru.ru_utime + ru.ru_stime
    rec["wrk_cpu_us_per_req"] = wrk_s * 1e6 / n
    busy_s = (s_after["cpu"][0] - s_before["cpu"][0]) / clk
    steal_s = (s_after["cpu"][1] - s_before["cpu"][1]) / clk
    # In cores (1.0 = one CPU fully used for the whole run). Clock-tick sampling makes
    # small values (< ~0.05) noise.
    rec["foreign_cores"] = max(0.0, busy_s - backend_s - proxy_s - wrk_s) / wall_s
    rec["steal_cores"] = steal_s / wall_s
    rec["cpu_busy"] = {k: round((s_after[k][0] - s_before[k][0]) / clk / wall_s, 3)
                       for k in s_after if k != "cpu"}
    print(json.dumps(rec))
    return 0


# The system calls a large-body relay is made of, counted one by one when the kernel has
# their tracepoints; the rest are in the total.
# (pread64 and pwrite64: nginx's temporary files, when it buffers a response to disk.)
SYSCALL_NAMES = ("read", "readv", "pread64", "recvfrom", "recvmsg", "write", "writev",
                 "pwrite64", "sendto", "sendmsg", "sendfile64", "splice", "epoll_wait",
                 "epoll_pwait", "epoll_ctl", "poll", "ppoll", "io_uring_enter")
# io_uring operations are no system calls of their own: counted from io_uring_submit_req by
# opcode (include/uapi/linux/io_uring.h).
URING_OPCODES = {"recv": 27, "send": 26, "splice": 30, "poll_add": 6, "async_cancel": 14}


def _tracefs():
    for d in ("/sys/kernel/tracing", "/sys/kernel/debug/tracing"):
        if os.path.isdir(os.path.join(d, "events")):
            return d
    return None


def _perf_events(tfs):
    """(name, perf arguments) per counter: every system call, the named ones, io_uring
    operations, and those of the opcodes above."""
    events = [("syscalls", ["-e", "raw_syscalls:sys_enter"])]
    for n in SYSCALL_NAMES:
        if os.path.isdir(f"{tfs}/events/syscalls/sys_enter_{n}"):
            events.append((n, ["-e", f"syscalls:sys_enter_{n}"]))
    if os.path.isdir(f"{tfs}/events/io_uring/io_uring_submit_req"):
        events.append(("io_uring ops", ["-e", "io_uring:io_uring_submit_req"]))
        if os.path.isdir(f"{tfs}/events/io_uring/io_uring_complete"):
            # Completions the kernel posted: a multishot receive posts many per submission.
            events.append(("io_uring completions", ["-e", "io_uring:io_uring_complete"]))
        for name, op in URING_OPCODES.items():
            events.append((f"io_uring {name}", ["-e", "io_uring:io_uring_submit_req",
                                                "--filter", f"opcode == {op}"]))
    return events


def _parse_perf_csv(path, names):
    counts, values = {}, []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            values.append(line.split(",")[0])
    for name, value in zip(names, values):
        if value.isdigit():
            counts[name] = int(value)
    return counts


def _parse_strace_summary(path):
    counts = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 5 and fields[3].isdigit() and not line.startswith("%"):
                name = fields[-1]
                counts["syscalls" if name == "total" else name] = int(fields[3])
    return counts


def syscalls(argv):
    """syscalls TARGET OUTFILE PIDS TIMEOUT_S LOAD_CPUS -- WRK ARGS...

    Counts the system calls (and io_uring operations) of the processes PIDS (comma-separated:
    the proxy's tree) while wrk runs, and prints one JSON line: the counts and the counts per
    response. With perf and the kernel's tracepoints the counting is done in the kernel
    (`perf stat -e raw_syscalls:sys_enter ...`), at a small cost; without them `strace -c -f`
    counts, which slows the proxy a lot, and a slower proxy finds more bytes waiting per read,
    so its reads per MiB come out lower than unobserved. The tool used is in the line."""
    sep = argv.index("--")
    target, outfile, pids, timeout_s, load_cpus = argv[:sep]
    cmd = argv[sep + 1:]
    if load_cpus != "-":
        cmd = ["taskset", "-c", load_cpus] + cmd
    rec = {"target": target}
    tfs = _tracefs()
    perf_ok = False
    if tfs and shutil.which("perf"):
        perf_ok = subprocess.run(["perf", "stat", "-e", "raw_syscalls:sys_enter", "true"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 timeout=30).returncode == 0
    if perf_ok:
        events = _perf_events(tfs)
        out = outfile + ".perf.csv"
        argv_t = ["perf", "stat", "-x,", "-o", out, "-p", pids] + [a for _, e in events for a in e]
        rec["tool"] = "perf stat (kernel tracepoints)"
    elif shutil.which("strace"):
        out = outfile + ".strace.txt"
        argv_t = ["strace", "-c", "-f", "-o", out] + [x for p in pids.split(",") for x in ("-p", p)]
        rec["tool"] = "strace -c -f (slows the proxy: fewer, fuller reads than unobserved)"
    else:
        rec["error"] = "neither perf (with tracepoints) nor strace is available"
        print(json.dumps(rec))
        return 0
    tracer = subprocess.Popen(argv_t, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(0.5)  # attached to every thread before the load starts
    if tracer.poll() is not None:
        rec["error"] = f"{argv_t[0]} exited: {tracer.stderr.read().decode(errors='replace')[-300:]}"
        print(json.dumps(rec))
        return 0
    with open(outfile, "wb") as f:
        child = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT)
    try:
        child.wait(float(timeout_s))
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    tracer.send_signal(signal.SIGINT)
    try:
        tracer.wait(15)
    except subprocess.TimeoutExpired:
        tracer.kill()
        tracer.wait()
    with open(outfile, errors="replace") as f:
        text = f.read()
    try:
        rec.update(parse_wrk(text))
    except ValueError as e:
        rec["error"] = f"{e} (wrk exit {child.returncode})"
        print(json.dumps(rec))
        return 0
    counts = (_parse_perf_csv(out, [n for n, _ in events]) if perf_ok
              else _parse_strace_summary(out))
    if "syscalls" not in counts:
        rec["error"] = f"no counts in {out}"
        print(json.dumps(rec))
        return 0
    n = max(rec["requests"], 1)
    rec["counts"] = counts
    rec["per_response"] = {k: v / n for k, v in counts.items()}
    print(json.dumps(rec))
    return 0


# --- proxy.sh's report -----------------------------------------------------------------

def _fmt_us(us):
    if us is None:
        return "—"
    if us >= 1e6:
        return f"{us / 1e6:.2f} s"
    if us >= 1e3:
        return f"{us / 1e3:.2f} ms"
    return f"{us:.0f} µs"


def _fmt_num(x, fmt):
    return "—" if x is None else format(x, fmt)


def _median(recs, key):
    return median(r.get(key) for r in recs)


def read_meta(meta_path):
    """META is tab-separated `key<TAB>value` lines written by proxy.sh. Repeated keys:
    `target` (name<TAB>label<TAB>failure reason or empty) and `note` accumulate."""
    meta = {"targets": [], "notes": []}
    with open(meta_path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            key, _, value = line.partition("\t")
            if key == "target":
                name, label, failed = (value.split("\t") + ["", ""])[:3]
                meta["targets"].append({"name": name, "label": label, "failed": failed})
            elif key == "note":
                meta["notes"].append(value)
            elif key == "target_failed":
                name, _, why = value.partition("\t")
                for t in meta["targets"]:
                    if t["name"] == name:
                        t["failed"] = why
            else:
                meta[key] = value
    return meta


def _target_summary(recs, name):
    """(counted runs, unparsable runs, medians) of one target's records: per round, the
    attempt with the least other load counts (retries exist only because another program
    disturbed a run)."""
    rounds = {}
    for r in recs:
        if r["target"] == name:
            rounds.setdefault(r["round"], []).append(r)
    mine = [min(att, key=lambda r: ("error" in r, r.get("foreign_cores", 0.0)))
            for att in rounds.values()]
    rs = [r for r in mine if "error" not in r]
    bad = [r for r in mine if "error" in r]
    if not rs:
        return rs, bad, None
    return rs, bad, {
        "rps": statistics.median(r["rps"] for r in rs),
        "p50_us": _median(rs, "p50_us"),
        "p99_us": _median(rs, "p99_us"),
        "cpu_us": _median(rs, "proxy_cpu_us_per_req"),
        "busy": _median(rs, "proxy_busy"),
        "cpu_norm": _median([dict(r, n=r["proxy_cpu_us_per_req"] / r["backend_cpu_us_per_req"])
                             for r in rs if r.get("proxy_cpu_us_per_req") is not None
                             and r.get("backend_cpu_us_per_req")], "n"),
        "backend_cpu_us": _median(rs, "backend_cpu_us_per_req"),
        "errors": sum(r["socket_errors"] for r in rs),
        "non2xx": sum(r["non2xx"] for r in rs),
        "foreign": _median(rs, "foreign_cores"),
        "foreign_max": max(r.get("foreign_cores", 0) for r in rs),
        "retried": sum(len(att) - 1 for att in rounds.values()),
        "runs": len(rs),
    }


def _syscall_text(rec, digits=1):
    """The per-response figures of one `syscalls` record: (all system calls, I/O operations
    (system calls other than io_uring_enter, plus io_uring operations), the breakdown)."""
    if rec is None:
        return None, None, "not measured"
    if "error" in rec:
        return None, None, f"not measured: {rec['error']}"
    p = rec["per_response"]
    ops = p["syscalls"] - p.get("io_uring_enter", 0.0) + p.get("io_uring ops", 0.0)
    shown = 0.5 * 10 ** -digits
    parts = [f"{k} {v:.{digits}f}" for k, v in sorted(p.items(), key=lambda kv: -kv[1])
             if k not in ("syscalls", "io_uring ops") and v >= shown]
    return p["syscalls"], ops, ", ".join(parts) or "—"


def _syscall_records(meta):
    """The `syscalls` records of a run, by target name (`sluice`, `1m:sluice`)."""
    sys_recs = {}
    path = meta.get("syscalls_path")
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip():
                    r = json.loads(line)
                    sys_recs[r["target"]] = r
    return sys_recs


def _per_request_calls(sys_recs, name):
    """The small table's last three cells for one target."""
    if name == "backend":
        return ["—", "—", "—"]
    calls, ops, parts = _syscall_text(sys_recs.get(name), digits=2)
    return [_fmt_num(calls, ".2f"), _fmt_num(ops, ".2f"), parts]


def _large_section(meta, recs, summary_out):
    """The 1 MiB scenario's table, ratios and method, as markdown."""
    sys_recs = _syscall_records(meta)
    rows, large = [], {}
    for t in meta["targets"]:
        name, label = t["name"], t["label"]
        rs, bad, s = _target_summary(recs, "1m:" + name)
        if not rs:
            why = t.get("failed") or (bad[0]["error"] if bad else "no runs")
            rows.append([label, f"FAILED: {why}"] + ["—"] * 11)
            continue
        calls, ops, parts = _syscall_text(sys_recs.get("1m:" + name)) if name != "backend" else (
            None, None, "—")
        s.update(syscalls_per_mib=calls, ops_per_mib=ops)
        large[name] = s
        rps = [r["rps"] for r in rs]
        spread = (max(rps) - min(rps)) / s["rps"] * 100 if s["rps"] else 0
        errs = f"{s['errors']}/{s['non2xx']}" + (" ⚠" if s["errors"] or s["non2xx"] or bad else "")
        rows.append([
            label, f"{s['rps']:,.0f}", f"{spread:.1f}%", _fmt_us(s["p50_us"]), _fmt_us(s["p99_us"]),
            _fmt_num(s["cpu_us"], ",.0f"), _fmt_num(s["cpu_norm"], ".2f"),
            "—" if s["busy"] is None else f"{s['busy'] * 100:.0f}%",
            _fmt_num(calls, ".1f"), _fmt_num(ops, ".1f"), parts, errs, f"{s['runs']}"])
    summary_out.update({"1m:" + k: v for k, v in large.items()})
    header = ["target", "MiB/s (median)", "spread", "p50", "p99", "proxy CPU µs/MiB",
              "÷ backend's", "proxy core busy", "syscalls/MiB", "I/O ops/MiB",
              "per MiB, by call", "sock err / non-2xx", "runs"]
    ratio_rows = []
    sl = large.get("sluice")
    for peer, target in (("nginx", 0.8), ("haproxy", 0.8), ("sluice_b", None)):
        p = large.get(peer)
        plabel = next((t["label"] for t in meta["targets"] if t["name"] == peer), peer)
        if peer == "sluice_b":
            plabel = "sluice B (`SLUICE_B_BIN`)"
        if not sl or not p:
            continue
        ratio_rows.append([f"sluice / {plabel}", _ratio(sl["rps"], p["rps"]),
                           _ratio(sl["cpu_us"], p["cpu_us"], target),
                           _ratio(sl["cpu_norm"], p["cpu_norm"], target),
                           _ratio(sl["syscalls_per_mib"], p["syscalls_per_mib"]),
                           _ratio(sl["ops_per_mib"], p["ops_per_mib"])])
    tool = next((r.get("tool") for r in sys_recs.values() if r.get("tool")), "none")
    legend = (
        "_Each response is 1 MiB (`GET /1m`), so MiB/s is responses/s and CPU µs/MiB is CPU µs"
        " per response. proxy CPU, ÷ backend's, busy, errors, runs: as in the table above."
        " syscalls/MiB: every system call of the proxy's processes and threads during a"
        f" separate {meta.get('syscall_seconds', '?')} s run of the same load, ÷ responses;"
        " I/O ops/MiB: the same without io_uring_enter, plus the io_uring operations"
        " (requests the kernel carried out without a system call of their own), the"
        " figure to compare between an io_uring proxy and an epoll one. per MiB, by call:"
        f" the calls and io_uring operations counted one by one. Counted with {tool}._")
    parts = [f"### 1 MiB responses (`{meta.get('wrk_large_cmd', '')}`)", md_table(header, rows),
             legend]
    if ratio_rows:
        parts.append(md_table(["ratio", "throughput", "CPU per MiB (target ≤0.8×)",
                               "same, ÷ backend's", "syscalls per MiB", "I/O ops per MiB"],
                              ratio_rows))
    return "\n\n".join(parts)


def _ratio(a, b, target=None, higher_is_better=False):
    """`a / b` as a ratio cell, judged against `target` when there is one."""
    if a is None or b is None or b == 0:
        return "n/a"
    r = a / b
    if target is None:
        return f"{r:.2f}×"
    ok = r >= target if higher_is_better else r <= target
    return f"{r:.2f}× ({'meets' if ok else 'misses'} {'≥' if higher_is_better else '≤'}{target})"


def _peer_ratios(meta, summary, prefix, suffix, rows, dagger, ceilings):
    """The small table's ratio rows of sluice against the floor and each peer, for the
    pinned runs (prefix "") or the unpinned ones ("free:"). Returns the dagger note."""
    sl = summary.get(prefix + "sluice")
    # The floor: the CPU target is ≤0.9× a minimal byte pipe (which is ≤0.6× the peers).
    for peer, targets in (("floor", (None, 0.9, 0.9, None)), ("nginx", (1.3, 0.6, 0.6, 1.0)),
                          ("haproxy", (1.3, 0.6, 0.6, 1.0))):
        p = summary.get(prefix + peer)
        plabel = next((t["label"] for t in meta["targets"] if t["name"] == peer), peer)
        if peer == "floor" and (p is None or sl is None):
            continue
        if not sl or not p:
            rows.append([f"sluice / {plabel}{suffix}", "n/a", "n/a", "n/a", "n/a"])
            continue
        thr = _ratio(sl["rps"], p["rps"], targets[0], True)
        if sl["busy"] is not None and sl["busy"] < 0.9 and peer != "floor":
            thr += " †"
            ceil = summary.get(prefix + "backend", {}).get("rps")
            dagger = (f"† sluice's core was only {sl['busy'] * 100:.0f}% busy, so its throughput"
                      " is not its CPU limit and the throughput ratio understates it.")
            if ceil:
                ceilings.append(f"{ceil / p['rps']:.2f}× {plabel}{suffix}")
                dagger += f" The load side's ceiling is {ceil:,.0f} req/s = " + ", ".join(ceilings) + "."
        rows.append([
            f"sluice / {plabel}{suffix}",
            thr,
            _ratio(sl["cpu_us"], p["cpu_us"], targets[1]),
            _ratio(sl["cpu_norm"], p["cpu_norm"], targets[2]),
            _ratio(sl["p99_us"], p["p99_us"], targets[3]),
        ])
    other = summary.get(prefix + "sluice_b")
    if sl and other:
        rows.append([f"sluice / sluice B (`SLUICE_B_BIN`){suffix}", _ratio(sl["rps"], other["rps"]),
                     _ratio(sl["cpu_us"], other["cpu_us"]), _ratio(sl["cpu_norm"], other["cpu_norm"]),
                     _ratio(sl["p99_us"], other["p99_us"])])
    return dagger


def report(results_path, meta_path):
    meta = read_meta(meta_path)
    recs = []
    if os.path.exists(results_path):
        with open(results_path) as f:
            recs = [json.loads(line) for line in f if line.strip()]

    summary = {}
    rows = []
    sys_recs = _syscall_records(meta)
    scenarios = meta.get("scenarios", "small").split()
    # The pinned rows, then (BENCH_PIN=both) the same targets unpinned, as `free:NAME`.
    small_targets = [t for t in meta["targets"]] if "small" in scenarios else []
    if any(r["target"].startswith("free:") for r in recs):
        small_targets += [dict(t, name="free:" + t["name"], label=t["label"] + " (unpinned)")
                          for t in meta["targets"]]
    for t in small_targets:
        name, label = t["name"], t["label"]
        rs, bad, s = _target_summary(recs, name)
        if name.startswith("free:") and not rs and not bad:
            continue  # Not measured unpinned (it failed to start).
        if not rs:
            why = t.get("failed") or (bad[0]["error"] if bad else "no runs")
            rows.append([label, f"FAILED: {why}"] + ["—"] * 13)
            continue
        if t.get("failed"):
            label += f" (⚠ {t['failed']})"
        summary[name] = s
        rps = [r["rps"] for r in rs]
        med = s["rps"]
        spread = (max(rps) - min(rps)) / med * 100 if med else 0
        errs = f"{s['errors']}/{s['non2xx']}"
        if s["errors"] or s["non2xx"] or bad:
            errs += " ⚠"
        rows.append([
            label,
            f"{med:,.0f}",
            f"{spread:.1f}%",
            _fmt_us(s["p50_us"]),
            _fmt_us(s["p99_us"]),
            _fmt_num(s["cpu_us"], ".2f"),
            _fmt_num(s["cpu_norm"], ".2f"),
            "—" if s["busy"] is None else f"{s['busy'] * 100:.0f}%",
            _fmt_num(s["backend_cpu_us"], ".2f"),
            _fmt_num(s["foreign"], ".2f"),
            errs,
            f"{s['runs']}" + (f" (+{len(bad)} unparsable)" if bad else ""),
        ] + _per_request_calls(sys_recs, name))
    header = ["target", "req/s (median)", "spread", "p50", "p99", "proxy CPU µs/req",
              "÷ backend's", "proxy core busy", "backend CPU µs/req", "other load (cores)", "sock err / non-2xx",
              "runs", "syscalls/req", "I/O ops/req", "per request, by call"]
    main_table = md_table(header, rows)
    legend = (
        "_req/s, p50, p99: from wrk, median over the runs. spread: (max − min) / median of"
        " req/s. proxy CPU µs/req: user+system CPU of all the proxy's processes and threads"
        " during the run ÷ requests. ÷ backend's: the same divided by the backend's CPU per"
        " request in the same run, which cancels changes in the host's speed (they slow every"
        " process alike); a cross-check of the CPU ratio. proxy core busy: that CPU ÷ run time (100% = one core"
        " saturated). backend CPU µs/req: the shared backend's CPU ÷ requests; it should be"
        " similar in every proxied row (clearly higher: the proxy reconnects upstream or sends"
        " more bytes; lower in the ceiling row, where the backend batches more). other"
        " load: CPU used during the run by programs other than proxy, backend and wrk, in"
        " cores (median); a run above the threshold is repeated and the least disturbed"
        " attempt counts. syscalls/req, I/O ops/req, by call: as for the 1 MiB table below,"
        " per response of a separate counting run (`io_uring completions`: the completions"
        " the kernel posted, which a multishot operation posts many of per submission)._")
    notes = list(meta.get("notes", []))
    for t in meta["targets"]:
        s = summary.get(t["name"])
        if s and s["busy"] is not None and s["busy"] < 0.9:
            notes.insert(0, f"⚠ {t['label']}: proxy core only {s['busy'] * 100:.0f}% busy, so its"
                            " throughput and latency were not set by its own CPU (but by the"
                            " load side, see the ceiling row; by other load; or by the proxy"
                            " waiting); compare CPU µs/req instead.")
        fmax = float(meta.get("foreign_max", "0.1"))
        if s and s["foreign_max"] > fmax:
            notes.insert(0, f"⚠ {t['label']}: a counted run still had {s['foreign_max']:.2f}"
                            " cores of other load after all retries; the machine was busy.")
        if s and s["retried"]:
            notes.append(f"{t['label']}: {s['retried']} extra attempt(s) because other load"
                         f" exceeded {fmax} cores; per round the least disturbed attempt counts.")
        if s and (s["errors"] or s["non2xx"]):
            notes.insert(0, f"⚠ {t['label']}: {s['errors']} socket errors and {s['non2xx']}"
                            " non-2xx/3xx responses over its runs; its figures are suspect.")

    ratio_rows = []
    dagger, ceilings = "", []
    for prefix, suffix in (("", ""), ("free:", " (unpinned)")):
        if prefix and not any(k.startswith(prefix) for k in summary):
            continue
        dagger = _peer_ratios(meta, summary, prefix, suffix, ratio_rows, dagger, ceilings)
    sl = summary.get("sluice")
    fast = summary.get("sluice_fast")
    if sl and fast:
        ratio_rows.append([f"sluice {meta.get('sluice_build', '')} / sluice ReleaseFast (the cost of"
                           " the safety checks)", _ratio(sl["rps"], fast["rps"]),
                           _ratio(sl["cpu_us"], fast["cpu_us"]), _ratio(sl["cpu_norm"], fast["cpu_norm"]),
                           _ratio(sl["p99_us"], fast["p99_us"])])
    ratio_table = md_table(["ratio", "throughput (target ≥1.3× the peers)",
                            "CPU per request (target ≤0.6× the peers, ≤0.9× the floor)",
                            "same, ÷ backend's (cross-check)",
                            "p99 latency (target ≤1.0× the peers)"], ratio_rows)

    m = meta
    machine = "\n".join([
        f"- Date (UTC): {meta['date']}",
        f"- CPU: {m['cpu_model']}, nproc={m['nproc']}; kernel {m['kernel']}",
        f"- Pinning: {meta['pinning']}",
        f"- sluice: {m['sluice_version']} (commit {m['sluice_commit']}, zig {m['zig_version']},"
        f" {m.get('sluice_build', 'ReleaseFast')}){', io=' + meta['sluice_io'] if meta.get('sluice_io') else ''}",
        f"- nginx: {m['nginx_version']}; HAProxy: {m['haproxy_version']}; wrk: {m['wrk_version']}",
        f"- Backend: nginx, 1 worker, `return 200 \"hello\\n\"` (6-byte body) on `/` and a"
        f" 1 MiB file (sendfile) on `/1m`, keep-alive, on 127.0.0.1:{meta['backend_port']}",
        f"- Load: `{meta['wrk_cmd']}` — {meta['runs']} measured run(s) per target after a"
        f" {meta['warmup_s']}s warm-up before each run; rounds interleave the targets",
        f"- CPU per request = (utime+stime of the proxy's whole process tree, from /proc, over"
        f" the run) / requests; CLK_TCK={meta['clk_tck']}",
    ])
    large_md = ""
    if "large" in scenarios:
        large_md = _large_section(meta, recs, summary)
    if "small" not in scenarios:
        main_table = legend = ratio_table = dagger = ""
    md = "\n\n".join(filter(None, [
        f"## Proxy benchmark ({meta['mode']})",
        "### Small responses (6 bytes)" if "small" in scenarios else "",
        main_table,
        legend,
        ratio_table,
        dagger,
        large_md,
        machine,
        "\n".join(f"- {n}" for n in notes) if notes else "",
    ]))
    write_report(meta["md_path"], [md], data={"meta": meta, "summary": summary, "runs": recs})
    return 0


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "freeport":
        print(freeport())
        return 0
    if cmd == "wait-port":
        return wait_port(int(args[0]), float(args[1]), int(args[2]) if len(args) > 2 else 0)
    if cmd == "smoke":
        return smoke(int(args[0]))
    if cmd == "smoke-large":
        return smoke_large(int(args[0]), args[1])
    if cmd == "syscalls":
        return syscalls(args)
    if cmd == "tree":
        print("\n".join(str(p) for p in tree(int(args[0]))))
        return 0
    if cmd == "cputicks":
        print(" ".join(str(cputicks(int(a))) if a != "-" else "-" for a in args))
        return 0
    if cmd == "conf":
        sys.stdout.write(proxy_sh_conf(args[0], args[1], int(args[2]), *args[3:4]))
        return 0
    if cmd == "measure":
        return measure(args)
    if cmd == "report":
        return report(args[0], args[1])
    if cmd == "parse-wrk":
        with open(args[0]) as f:
            print(json.dumps(parse_wrk(f.read())))
        return 0
    print(f"unknown subcommand {cmd!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
