#!/usr/bin/env python3
"""HTTPS driver for bench/tls.sh (Python 3 stdlib only).

sluice, nginx and HAProxy, one worker each pinned to TLS_PROXY_CPUS, each terminating TLS
with the same certificate and proxying to one nginx backend (`return 200 "hello\\n"`, plain
HTTP, pinned with the load to TLS_LOAD_CPUS), as bench/proxy.sh's configs plus TLS. Every
proxy runs twice: with an ECDSA P-256 certificate and with an RSA-2048 one (made by
tls.sh with openssl). Interleaved rounds (every proxy once per round, rotated), three
scenarios:

  keepalive  wrk -t1 -cTLS_CONNECTIONS --latency https://127.0.0.1:PORT/ (ECDSA): the
             proxy's CPU per request over established TLS connections (benchlib.measure)
  new        `openssl s_time -new -time TLS_STIME`: a full handshake per connection, no
             request (so nothing but the handshake, and the backend idle)
  reuse      `openssl s_time -reuse`: resumed handshakes (session tickets)

For the handshakes, the figure is handshakes per CPU-second of the proxy (its utime+stime
from /proc around the run): what one core does when busy. The client is one s_time process,
serial, so the proxy is not saturated and handshakes per wall second mostly measure the
client; both are reported.

A measurement, not a test: exits non-zero only when the harness breaks.
Knobs come from the environment; bench/tls.sh --help lists them.
"""

import contextlib
import io
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402 - next to this file
from benchlib import HarnessError, env_int  # noqa: E402

note = benchlib.make_note("tls")

KINDS = ("ecdsa", "rsa")
# The same TLS policy for nginx as sluice's: TLS 1.2 and 1.3, tickets on, no session cache
# (sluice resumes with tickets only); HAProxy's defaults are TLS 1.2+ with tickets (and a
# session cache for TLS 1.2 IDs, which tickets make unused).
NGINX_TLS = ("ssl_protocols TLSv1.2 TLSv1.3;", "ssl_session_tickets on;",
             "ssl_session_cache off;")


class Proxy:
    def __init__(self, name, kind, argv, conf=None):
        self.name, self.kind, self.argv, self.conf = name, kind, argv, conf
        self.proc = None
        self.port = None
        self.fail = ""
        self.negotiated = ""
        self.runs = {"keepalive": [], "new": [], "reuse": []}

    @property
    def key(self):
        return f"{self.name}-{self.kind}"


def make_proxies(args, run_dir, ports, backend, targets):
    out = []
    for kind in KINDS:
        cert, key = (os.path.join(args.certs, f"{kind}.{x}") for x in ("pem", "key"))
        for t in targets:
            port = ports.fresh()
            if t == "sluice":
                p = Proxy(t, kind, [args.sluice, "--workers", "1", "--listen",
                                    f"127.0.0.1:{port}", "--backend", backend,
                                    "--tls-cert", cert, "--tls-key", key])
            elif t == "nginx":
                conf = os.path.join(run_dir, f"nginx-{kind}.conf")
                tls = (f"ssl_certificate {cert};", f"ssl_certificate_key {key};") + NGINX_TLS
                with open(conf, "w") as f:
                    f.write(benchlib.nginx_conf(run_dir, f"nginx-{kind}", 8192,
                                                benchlib.nginx_proxy_http(port, backend, tls=tls),
                                                nofile=16384))
                p = Proxy(t, kind, [args.nginx, "-e", f"{run_dir}/nginx-{kind}.error.log",
                                    "-p", run_dir + "/", "-c", conf])
            elif t == "haproxy":
                conf = os.path.join(run_dir, f"haproxy-{kind}.cfg")
                both = os.path.join(run_dir, f"{kind}.both.pem")  # HAProxy: cert + key, one file
                with open(both, "w") as f:
                    f.write(open(cert).read() + open(key).read())
                front = ("http-request set-header X-Forwarded-Proto https",
                         "http-request set-header X-Forwarded-Host %[req.hdr(host)]")
                with open(conf, "w") as f:
                    f.write(benchlib.haproxy_conf(port, backend, 8192, frontend=front,
                                                  bind_extra=f" ssl crt {both} alpn http/1.1"))
                p = Proxy(t, kind, [args.haproxy, "-db", "-f", conf])
            else:
                raise HarnessError(f"TLS_TARGETS: unknown target {t!r} (sluice nginx haproxy)")
            p.port = port
            out.append(p)
    return out


def start(p, run_dir, cpus):
    if not benchlib.start_pinned(p, run_dir, cpus):
        return
    try:
        p.negotiated = https_smoke(p.port)
    except (OSError, ValueError) as e:
        p.fail = f"HTTPS smoke test: {type(e).__name__}: {e}"


def https_smoke(port):
    """Two `GET /` on one TLS connection must answer 200 hello; returns 'TLSv1.3 CIPHER'."""
    ctx = benchlib.client_tls()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            for _ in range(2):
                s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
                buf = b""
                while not (b"\r\n\r\n" in buf and buf.endswith(b"hello\n")):
                    chunk = s.recv(4096)
                    if not chunk:
                        raise ValueError(f"closed after {buf[:100]!r}")
                    buf += chunk
                if not buf.startswith(b"HTTP/1.1 200"):
                    raise ValueError(f"got {buf[:100]!r}")
            return f"{s.version()} {s.cipher()[0]}"


def keepalive(p, rnd, k, run_dir, backend_pid):
    url = f"https://127.0.0.1:{p.port}/"
    wrk = ["wrk", "-t1", f"-c{k['connections']}", "--latency"]
    if k["warmup"]:
        subprocess.run(["taskset", "-c", k["load_cpus"]] + wrk + [f"-d{k['warmup']}s", url],
                       stdout=subprocess.DEVNULL, timeout=k["warmup"] + 30, check=False)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        benchlib.measure([p.key, str(rnd), "1", os.path.join(run_dir, f"wrk-{p.key}-{rnd}.txt"),
                          str(p.proc.pid), str(backend_pid), str(k["duration"] + 30),
                          k["load_cpus"], "--"] + wrk + [f"-d{k['duration']}s", url])
    return json.loads(buf.getvalue())


def s_time(p, mode, rnd, k, run_dir):
    """One `openssl s_time -MODE` run; handshakes, wall and the proxy's CPU seconds."""
    # s_time reads nothing after a TLS 1.3 handshake, so it never holds a 1.3 ticket and
    # `-reuse` would make full handshakes: resumption is measured over TLS 1.2 (tickets).
    cmd = ["taskset", "-c", k["load_cpus"], "openssl", "s_time", "-connect",
           f"127.0.0.1:{p.port}", f"-{mode}", "-time", str(k["stime"])] + \
        (["-tls1_2"] if mode == "reuse" else [])
    clk = os.sysconf("SC_CLK_TCK")
    c0, s0, w0 = benchlib.cputicks(p.proc.pid), benchlib.proc_stat_busy(), time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=k["stime"] + 30, check=False)
    wall = time.monotonic() - w0
    c1, s1 = benchlib.cputicks(p.proc.pid), benchlib.proc_stat_busy()
    with open(os.path.join(run_dir, f"stime-{mode}-{p.key}-{rnd}.txt"), "w") as f:
        f.write(r.stdout + r.stderr)
    m = re.findall(r"^(\d+) connections in [0-9.]+s;", r.stdout, re.M)
    rec = {"target": p.key, "round": rnd, "wall_s": wall}
    if not m or int(m[-1]) == 0:
        rec["error"] = f"s_time exit {r.returncode}: {(r.stdout + r.stderr)[-200:]!r}"
        return rec
    n = int(m[-1])
    # s_time prints one character per connection: `r` resumed, `*` a full handshake.
    marks = "".join(re.findall(r"^[*r]+$", r.stdout, re.M))
    rec["resumed"] = marks.count("r")
    cpu = (c1 - c0) / clk
    rec.update(handshakes=n, per_wall_s=n / wall, proxy_cpu_s=cpu,
               per_cpu_s=n / cpu if cpu else None, proxy_busy=cpu / wall,
               foreign_cores=max(0.0, (s1["cpu"][0] - s0["cpu"][0]) / clk - cpu) / wall)
    return rec


# --- report ----------------------------------------------------------------------------

def med(recs, key):
    vals = [r[key] for r in recs if r.get(key) is not None and "error" not in r]
    return statistics.median(vals) if vals else None


def fmt(v, spec):
    return "—" if v is None else format(v, spec)


def tables(proxies, k):
    ka_h = ["proxy (ECDSA)", "req/s", "p50 µs", "p99 µs", "CPU µs/req", "÷ backend's",
            "core busy", "other load", "runs"]
    ka = []
    hs_h = ["proxy", "cert", "full: per CPU-s", "full: per s", "core busy", "resumed: per CPU-s",
            "resumed: per s", "resumed share", "other load", "negotiated"]
    hs = []
    for p in proxies:
        if p.fail:
            (ka if p.kind == "ecdsa" else []).append([p.key, f"FAILED: {p.fail}"] + ["—"] * 7)
            hs.append([p.name, p.kind, f"FAILED: {p.fail}"] + ["—"] * 7)
            continue
        if p.kind == "ecdsa" and p.runs["keepalive"]:
            r = p.runs["keepalive"]
            ratio = [x["proxy_cpu_us_per_req"] / x["backend_cpu_us_per_req"] for x in r
                     if "error" not in x and x.get("backend_cpu_us_per_req")]
            ka.append([p.name, fmt(med(r, "rps"), ",.0f"), fmt(med(r, "p50_us"), ".0f"),
                       fmt(med(r, "p99_us"), ".0f"), fmt(med(r, "proxy_cpu_us_per_req"), ".2f"),
                       fmt(statistics.median(ratio) if ratio else None, ".2f"),
                       fmt(med(r, "proxy_busy"), ".0%"), fmt(med(r, "foreign_cores"), ".2f"),
                       str(sum(1 for x in r if "error" not in x))])
        n, u = p.runs["new"], p.runs["reuse"]
        hs.append([p.name, p.kind, fmt(med(n, "per_cpu_s"), ",.0f"), fmt(med(n, "per_wall_s"), ",.0f"),
                   fmt(med(n, "proxy_busy"), ".0%"), fmt(med(u, "per_cpu_s"), ",.0f"),
                   fmt(med(u, "per_wall_s"), ",.0f"), resumed_share(u),
                   fmt(med(n + u, "foreign_cores"), ".2f"),
                   p.negotiated])
    return (ka_h, ka), (hs_h, hs)


def resumed_share(recs):
    """Resumed ÷ all handshakes of the -reuse runs (s_time's first connection is full)."""
    done = [r for r in recs if "error" not in r]
    total = sum(r["handshakes"] for r in done)
    return f"{sum(r['resumed'] for r in done) / total:.0%}" if total else "—"


def ratio_lines(proxies):
    by = {p.key: p for p in proxies if not p.fail}
    lines = []
    s = by.get("sluice-ecdsa")
    for peer in ("nginx", "haproxy"):
        b = by.get(f"{peer}-ecdsa")
        if s and b:
            a_cpu, b_cpu = (med(x.runs["keepalive"], "proxy_cpu_us_per_req") for x in (s, b))
            if a_cpu and b_cpu:
                r = a_cpu / b_cpu
                lines.append(f"keep-alive HTTPS CPU per request, sluice / {peer}: {r:.2f}× "
                             f"(target ≤ 0.8×: {'met' if r <= 0.8 else 'missed'})")
    for kind in KINDS:
        s = by.get(f"sluice-{kind}")
        for peer in ("nginx", "haproxy"):
            b = by.get(f"{peer}-{kind}")
            if not s or not b:
                continue
            for mode, target in (("new", 1.3), ("reuse", None)):
                a_v, b_v = med(s.runs[mode], "per_cpu_s"), med(b.runs[mode], "per_cpu_s")
                if a_v and b_v:
                    r = a_v / b_v
                    t = f" (target ≥ {target}×: {'met' if r >= target else 'missed'})" if target else ""
                    what = "full" if mode == "new" else "resumed"
                    lines.append(f"{kind} {what} handshakes per CPU-second, sluice / {peer}:"
                                 f" {r:.2f}×{t}")
    return lines


def report(args, k, proxies, began):
    (ka_h, ka), (hs_h, hs) = tables(proxies, k)
    ratios = ratio_lines(proxies)
    ka_method = (f"keep-alive: wrk -t1 -c{k['connections']} -d{k['duration']}s --latency"
                 f" https://127.0.0.1:PORT/ after a {k['warmup']} s warm-up, {k['runs']} rounds;"
                 " every proxy in front of the same nginx backend (plain HTTP, upstream"
                 " keep-alive), proxy.sh's configs plus TLS. CPU µs/req: the proxy's"
                 " utime+stime ÷ requests; ÷ backend's: that ÷ the backend's own CPU per"
                 " request in the same run (a cross-check when the host slows everything).")
    hs_method = (f"handshakes: `openssl s_time -connect 127.0.0.1:PORT -new|-reuse -time"
                 f" {k['stime']}` (one serial client, no request sent: the handshake alone; -reuse"
                 " with -tls1_2, since s_time takes no TLS 1.3 ticket),"
                 f" {k['runs']} rounds; per CPU-s = handshakes ÷ the proxy's CPU seconds in the"
                 " run (what one busy core would do); per s = handshakes ÷ wall seconds (bound"
                 " by the single client, shown for reference). Same certificate for every proxy.")
    text, md = [], []
    for out, tf in ((text, benchlib.text_table), (md, benchlib.md_table)):
        out += ["## HTTPS: keep-alive requests through each proxy", "", tf(ka_h, ka), "",
                ka_method, "", "## HTTPS: handshakes", "", tf(hs_h, hs), "", hs_method, "",
                "Ratios of medians:"] + [f"- {x}" for x in ratios]
        out += ["", "### Machine", ""] + [f"- {x}" for x in args.info]
        out += [f"- command: {args.command}; run folder {args.run_dir}; harness took"
                f" {time.monotonic() - began:.0f} s"]
    benchlib.write_report(args.report, text, md, {
        "knobs": k, "runs": {p.key: p.runs for p in proxies},
        "negotiated": {p.key: p.negotiated for p in proxies},
        "failed": {p.key: p.fail for p in proxies if p.fail}})


# --- main ------------------------------------------------------------------------------

def one_round(live, rnd, k, run_dir, backend_pid):
    for j in range(len(live)):
        p = live[(rnd + j) % len(live)]
        if "keepalive" in k["scenarios"] and p.kind == "ecdsa":
            rec = keepalive(p, rnd, k, run_dir, backend_pid)
            p.runs["keepalive"].append(rec)
            note(f"round {rnd + 1} {p.key} keep-alive: " + (rec.get("error") or
                 f"{rec['rps']:,.0f} req/s, {rec.get('proxy_cpu_us_per_req', 0):.2f} µs/req"))
        for mode in ("new", "reuse"):
            if mode in k["scenarios"]:
                rec = s_time(p, mode, rnd, k, run_dir)
                p.runs[mode].append(rec)
                note(f"round {rnd + 1} {p.key} {mode}: " + (rec.get("error") or
                     f"{rec['handshakes']} handshakes, {rec['per_cpu_s'] or 0:,.0f}/CPU-s"))


def main():
    args = benchlib.harness_args(__doc__, "bench/tls.sh",
                                 required=("--nginx", "--haproxy", "--certs"))
    began = time.monotonic()
    k = {
        "runs": env_int("TLS_RUNS", 3, 1),
        "duration": env_int("TLS_DURATION", 8, 1),
        "warmup": env_int("TLS_WARMUP", 2),
        "connections": env_int("TLS_CONNECTIONS", 50, 1),
        "stime": env_int("TLS_STIME", 6, 1),
        "proxy_cpus": os.environ.get("TLS_PROXY_CPUS", "1"),
        "load_cpus": os.environ.get("TLS_LOAD_CPUS", "0"),
        "targets": os.environ.get("TLS_TARGETS", "sluice nginx haproxy").split(),
        "scenarios": os.environ.get("TLS_SCENARIOS", "keepalive new reuse").split(),
    }
    run_dir = os.path.abspath(args.run_dir)
    ports = benchlib.Ports()
    bport = ports.fresh()
    backend = benchlib.start_hello_backend(args.nginx, run_dir, bport)
    subprocess.run(["taskset", "-pc", k["load_cpus"], str(backend.pid)], check=False,
                   stdout=subprocess.DEVNULL)
    for pid in benchlib.tree(backend.pid):
        subprocess.run(["taskset", "-pc", k["load_cpus"], str(pid)], check=False,
                       stdout=subprocess.DEVNULL)
    proxies = make_proxies(args, run_dir, ports, f"127.0.0.1:{bport}", k["targets"])
    for p in proxies:
        start(p, run_dir, k["proxy_cpus"])
        note(f"{p.key}: {'FAILED: ' + p.fail if p.fail else p.negotiated}")
    live = [p for p in proxies if not p.fail]
    for rnd in range(k["runs"]):
        one_round(live, rnd, k, run_dir, backend.pid)
    report(args, k, proxies, began)
    return 0


if __name__ == "__main__":
    benchlib.run_harness("tls.py", main, grace_s=2)
