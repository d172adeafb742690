#!/usr/bin/env python3
"""HTTP/2 driver for bench/h2.sh (named http2.py: an h2.py would shadow the `h2` package the tests import) (Python 3 stdlib only).

sluice, nginx and HAProxy, one worker each pinned to H2_PROXY_CPUS, serving HTTP/2 and
proxying to one nginx backend (`return 200 "hello\\n"`, HTTP/1.1 with keep-alive, pinned with
the load to H2_LOAD_CPUS), with bench/proxy.sh's configs plus HTTP/2:

  h2c  h2load -n H2_REQUESTS -c H2_CLIENTS -m H2_STREAMS http://127.0.0.1:PORT/ (prior
       knowledge: sluice `--http2 on`, nginx `listen ... http2`, HAProxy `proto h2`)
  tls  the same over TLS with ALPN h2 (the same ECDSA certificate for every proxy)

Figures: requests per second (h2load's), and the proxy's CPU per request (its utime+stime
from /proc around the run, divided by the requests that succeeded). Interleaved rounds,
medians. Then the resident memory one idle HTTP/2 connection costs each proxy: H2_IDLE
connections opened (preface and SETTINGS sent, nothing else), the proxy's RSS before and
after, H2_IDLE_WAIT seconds (7) after the last: past sluice's hot second, after which an idle
connection gives its buffers back, and its pool's next trim (every 5 s), which gives their
pages back; nginx and HAProxy free an idle connection's buffers at once.

A measurement, not a test: exits non-zero only when the harness breaks.
"""

import os
import re
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402 - next to this file
from benchlib import env_int  # noqa: E402

note = benchlib.make_note("h2")
# Idle backend connections kept (sluice --upstream-keepalive, nginx `keepalive`; HAProxy keeps
# them without a cap by default): h2load's 16 x 32 streams are 512 requests in flight, and a
# pool that keeps fewer idle than that opens and closes a backend connection for most requests
# (64, the default of both, made sluice connect for 65% of them), which would measure TCP
# set-up rather than HTTP/2.
KEEPALIVE = 1024
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


class Proxy:
    def __init__(self, name, scenario, argv, port, conf=None):
        self.name, self.scenario, self.argv, self.port, self.conf = name, scenario, argv, port, conf
        self.proc = None
        self.fail = ""
        self.runs = []
        self.idle = None

    @property
    def key(self):
        return f"{self.name}-{self.scenario}"


def make_proxies(args, run_dir, ports, backend, k):
    cert, key = (os.path.join(args.certs, f"ecdsa.{x}") for x in ("pem", "key"))
    out = []
    for scenario in k["scenarios"]:
        tls = scenario == "tls"
        for t in k["targets"]:
            port = ports.fresh()
            if t == "sluice":
                argv = [args.sluice, "--workers", "1", "--listen", f"127.0.0.1:{port}",
                        "--backend", backend, "--http2", "on",
                        "--upstream-keepalive", str(KEEPALIVE)]
                if tls:
                    argv += ["--tls-cert", cert, "--tls-key", key]
                out.append(Proxy(t, scenario, argv, port))
            elif t == "nginx":
                conf = os.path.join(run_dir, f"nginx-{scenario}.conf")
                lines = ((f"ssl_certificate {cert};", f"ssl_certificate_key {key};",
                          "ssl_protocols TLSv1.2 TLSv1.3;") if tls else ())
                http = benchlib.nginx_proxy_http(port, backend, tls=lines).replace(
                    "keepalive 64;", f"keepalive {KEEPALIVE};")
                http = http.replace(f"listen 127.0.0.1:{port} backlog=4096",
                                    f"listen 127.0.0.1:{port} backlog=4096 http2")
                # One connection carries all of a client's streams: no per-connection cap.
                http = "    http2_max_requests 100000000;\n    http2_max_concurrent_streams 128;\n" + http
                with open(conf, "w") as f:
                    f.write(benchlib.nginx_conf(run_dir, f"nginx-{scenario}", 8192, http, nofile=16384))
                out.append(Proxy(t, scenario, [args.nginx, "-e", os.path.join(run_dir, f"nginx-{scenario}.error.log"),
                                                "-p", run_dir + "/", "-c", conf], port, conf))
            elif t == "haproxy":
                conf = os.path.join(run_dir, f"haproxy-{scenario}.cfg")
                pem = os.path.join(run_dir, "ecdsa-haproxy.pem")
                if tls and not os.path.exists(pem):
                    with open(pem, "w") as f:
                        f.write(open(cert).read() + open(key).read())
                bind = f" ssl crt {pem} alpn h2,http/1.1" if tls else " proto h2"
                with open(conf, "w") as f:
                    f.write(benchlib.haproxy_conf(port, backend, 8192, bind_extra=bind))
                out.append(Proxy(t, scenario, [args.haproxy, "-db", "-f", conf], port, conf))
    return out


def url(p):
    return f"{'https' if p.scenario == 'tls' else 'http'}://127.0.0.1:{p.port}/"


def h2load(p, k, n, run_dir, tag):
    cmd = ["taskset", "-c", k["load_cpus"], "h2load", "-n", str(n), "-c", str(k["clients"]),
           "-m", str(k["streams"]), url(p)]
    pids = benchlib.tree(p.proc.pid)
    before = sum(benchlib.cputicks(x) for x in pids)
    began = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - began
    after = sum(benchlib.cputicks(x) for x in pids)
    with open(os.path.join(run_dir, f"h2load-{p.key}-{tag}.txt"), "w") as f:
        f.write(done.stdout + done.stderr)
    m = re.search(r"requests: (\d+) total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored", done.stdout)
    rps = re.search(r"finished in [\d.]+m?s, ([\d.]+) req/s", done.stdout)
    if not m or not rps:
        return {"error": f"h2load said: {(done.stdout + done.stderr)[-300:]!r}"}
    ok = int(m.group(2))
    cpu_s = (after - before) / os.sysconf("SC_CLK_TCK")
    return {"requests": int(m.group(1)), "succeeded": ok, "failed": int(m.group(3)),
            "errored": int(m.group(4)), "rps": float(rps.group(1)), "wall_s": wall,
            "cpu_us_per_req": cpu_s * 1e6 / max(ok, 1)}


def rss_kib(pid):
    total = 0
    for x in benchlib.tree(pid):
        with open(f"/proc/{x}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
    return total


IDLE_WAIT = float(os.environ.get("H2_IDLE_WAIT", "7"))


def idle_memory(p, count):
    """RSS per idle HTTP/2 connection: `count` connections that sent the preface and an empty
    SETTINGS (and, over TLS, finished a handshake), held open."""
    ctx = benchlib.client_tls()
    if p.scenario == "tls":
        ctx.set_alpn_protocols(["h2"])
    before = rss_kib(p.proc.pid)
    socks = []
    try:
        for _ in range(count):
            s = socket.create_connection(("127.0.0.1", p.port), timeout=5)
            if p.scenario == "tls":
                s = ctx.wrap_socket(s, server_hostname="localhost")
            s.sendall(PREFACE)
            socks.append(s)
        for s in socks:
            s.recv(4096)  # the server's SETTINGS: the session exists
        time.sleep(IDLE_WAIT)
        after = rss_kib(p.proc.pid)
    finally:
        for s in socks:
            s.close()
    return (after - before) * 1024 / count


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def report(args, k, proxies, began):
    header = ["scenario", "proxy", "req/s", "CPU µs/req", "failed", "idle conn bytes"]
    rows = []
    for p in proxies:
        ok = [r for r in p.runs if "error" not in r]
        rows.append([p.scenario, p.name,
                     f"{med([r['rps'] for r in ok]):,.0f}" if ok else (p.fail or "error"),
                     f"{med([r['cpu_us_per_req'] for r in ok]):.2f}" if ok else "",
                     str(sum(r["failed"] + r["errored"] for r in ok)),
                     f"{p.idle:,.0f}" if p.idle is not None else ""])
    ratios = []
    for scenario in k["scenarios"]:
        by = {p.name: p for p in proxies if p.scenario == scenario}
        s = by.get("sluice")
        if not s or not [r for r in s.runs if "error" not in r]:
            continue
        s_cpu = med([r["cpu_us_per_req"] for r in s.runs if "error" not in r])
        s_rps = med([r["rps"] for r in s.runs if "error" not in r])
        for other in ("nginx", "haproxy"):
            o = by.get(other)
            ok = [r for r in o.runs if "error" not in r] if o else []
            if ok:
                ratios.append(f"{scenario}: sluice against {other}: CPU per request "
                              f"{s_cpu / med([r['cpu_us_per_req'] for r in ok]):.2f}x, requests per second "
                              f"{s_rps / med([r['rps'] for r in ok]):.2f}x")
    method = (f"h2load -n {k['requests']} -c {k['clients']} -m {k['streams']} after a"
              f" {k['warmup']}-request warm-up, {k['runs']} rounds, medians; each proxy one"
              " worker pinned, proxying to the same nginx backend over HTTP/1.1 keep-alive"
              f" (sluice and nginx keep {KEEPALIVE} idle backend connections, HAProxy all)."
              f" Idle connection bytes: the proxy's RSS growth for {k['idle']} idle HTTP/2"
              f" connections {IDLE_WAIT:g} s after they opened, divided by their number.")
    text, md = [], []
    for out, tf in ((text, benchlib.text_table), (md, benchlib.md_table)):
        out += ["## HTTP/2: h2load through each proxy", "", tf(header, rows), "", method, "",
                "Ratios of medians:"] + [f"- {x}" for x in ratios]
        out += ["", "### Machine", ""] + [f"- {x}" for x in args.info]
        out += [f"- command: {args.command}; run folder {args.run_dir}; harness took"
                f" {time.monotonic() - began:.0f} s"]
    benchlib.write_report(args.report, text, md, {
        "knobs": k, "runs": {p.key: p.runs for p in proxies},
        "idle": {p.key: p.idle for p in proxies},
        "failed": {p.key: p.fail for p in proxies if p.fail}})


def main():
    args = benchlib.harness_args(__doc__, "bench/h2.sh", required=("--nginx", "--haproxy", "--certs"))
    began = time.monotonic()
    k = {
        "runs": env_int("H2_RUNS", 3, 1),
        "requests": env_int("H2_REQUESTS", 200000, 1),
        "warmup": env_int("H2_WARMUP", 20000),
        "clients": env_int("H2_CLIENTS", 16, 1),
        "streams": env_int("H2_STREAMS", 32, 1),
        "idle": env_int("H2_IDLE", 500),
        "proxy_cpus": os.environ.get("H2_PROXY_CPUS", "1"),
        "load_cpus": os.environ.get("H2_LOAD_CPUS", "0"),
        "targets": os.environ.get("H2_TARGETS", "sluice nginx haproxy").split(),
        "scenarios": os.environ.get("H2_SCENARIOS", "h2c tls").split(),
    }
    run_dir = os.path.abspath(args.run_dir)
    ports = benchlib.Ports()
    bport = ports.fresh()
    backend = benchlib.start_hello_backend(args.nginx, run_dir, bport)
    for pid in benchlib.tree(backend.pid):
        subprocess.run(["taskset", "-pc", k["load_cpus"], str(pid)], check=False, stdout=subprocess.DEVNULL)
    proxies = make_proxies(args, run_dir, ports, f"127.0.0.1:{bport}", k)
    for p in proxies:
        benchlib.start_pinned(p, run_dir, k["proxy_cpus"])
        if not p.fail and k["warmup"]:
            w = h2load(p, k, k["warmup"], run_dir, "warmup")
            if "error" in w or w["succeeded"] == 0:
                p.fail = f"warm-up: {w.get('error') or 'no request succeeded'}"
        note(f"{p.key}: {'FAILED: ' + p.fail if p.fail else 'ready'}")
    live = [p for p in proxies if not p.fail]
    for rnd in range(k["runs"]):
        for j in range(len(live)):
            p = live[(rnd + j) % len(live)]
            rec = h2load(p, k, k["requests"], run_dir, str(rnd))
            p.runs.append(rec)
            note(f"round {rnd + 1} {p.key}: " + (rec.get("error") or
                 f"{rec['rps']:,.0f} req/s, {rec['cpu_us_per_req']:.2f} µs/req, {rec['failed']} failed"))
    if k["idle"]:
        for p in live:
            try:
                p.idle = idle_memory(p, k["idle"])
            except OSError as e:
                note(f"{p.key}: idle memory: {e}")
    report(args, k, proxies, began)
    return 0


if __name__ == "__main__":
    benchlib.run_harness("http2.py", main, grace_s=2)
