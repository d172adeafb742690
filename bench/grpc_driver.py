#!/usr/bin/env python3
"""gRPC driver for bench/grpc.sh (Python 3 stdlib only; the backend and the load are Go).

Unary gRPC calls from bench/grpcload/'s load generator (GRPC_CONNS HTTP/2 connections with
GRPC_CONCURRENCY calls in flight on each) to bench/grpcload/'s echo server, pinned with the load
to GRPC_LOAD_CPUS, along these paths (GRPC_TARGETS):

  direct      the load calls the backend itself: the floor every proxy is compared with
  sluice      client h2c -> sluice (`--http2 on`, one worker) -> backend h2c
              (`--backend-protocol h2c`: calls multiplexed on shared connections)
  nginx       client h2c -> nginx (`listen ... http2`, `grpc_pass`, upstream keepalive) -> h2c
  haproxy     client h2c -> HAProxy (`bind ... proto h2`, `server ... proto h2`) -> h2c
  sluice-tls  client h2c -> sluice -> backend over TLS (`--backend-protocol h2`,
              `--backend-tls`, ALPN h2) -- a second echo server with the ECDSA certificate

for each message size in GRPC_SIZES (bytes each way). Each proxy runs one worker pinned to
GRPC_PROXY_CPUS. Interleaved rounds, medians. Figures: calls per second and p50/p99 latency
(the load's own, over the calls that completed in the measured window), and the proxy's CPU
per call (utime+stime of its process tree from /proc, read when the load opens and closes the
window, divided by the calls). Ratios: each proxy's calls per second against direct's, and
sluice's CPU per call against nginx's and HAProxy's.

A measurement, not a test: exits non-zero only when the harness breaks.
"""

import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402 - next to this file
from benchlib import env_int  # noqa: E402

note = benchlib.make_note("grpc")
TARGETS = ("direct", "sluice", "nginx", "haproxy", "sluice-tls")
PROXY_PEERS = ("nginx", "haproxy")


class Target:
    """One path from the load to a backend: a proxy process (none for direct) and its runs
    per message size."""

    def __init__(self, name, argv, port, backend_port):
        self.name, self.argv, self.port, self.backend_port = name, argv, port, backend_port
        self.proc = None
        self.fail = ""
        self.runs = {}  # size -> [record]

    @property
    def key(self):
        return self.name


def nginx_http(port, backend):
    """nginx as a gRPC proxy: HTTP/2 with prior knowledge from clients, grpc_pass to an
    upstream with keep-alive connections (nginx sends one call per backend connection, so it
    needs many; 1,024 kept, more than the calls ever in flight)."""
    return ("    http2_max_concurrent_streams 1024;\n"
            "    keepalive_timeout 60s;\n    keepalive_requests 100000000;\n"
            "    upstream grpc_backend {\n"
            f"        server {backend};\n        keepalive 1024;\n"
            "        keepalive_requests 100000000;\n        keepalive_timeout 30s;\n    }\n"
            f"    server {{\n        listen 127.0.0.1:{port} backlog=4096 http2;\n"
            "        location / {\n            grpc_pass grpc://grpc_backend;\n"
            "            grpc_read_timeout 60s;\n        }\n    }\n")


def haproxy_cfg(port, backend):
    """HAProxy with HTTP/2 on both sides: `proto h2` on the bind (prior knowledge) and on the
    server (h2c to the backend); idle backend connections reused by every stream. Buffers of
    64 KiB: with the default 16 KiB, HAProxy 2.6 stalls every call once a few dozen 16 KiB
    messages are in flight on a connection (none completes; seen here, 4 x 16 calls)."""
    conf = benchlib.haproxy_conf(port, backend, 8192, ["tune.bufsize 65536"],
                                 bind_extra=" proto h2", frontend=())
    return conf.replace(f"server s1 {backend}", f"server s1 {backend} proto h2")


def make_targets(args, run_dir, ports, k):
    backend = ports.fresh()
    tls_backend = ports.fresh() if "sluice-tls" in k["targets"] else None
    out = []
    for t in k["targets"]:
        port = ports.fresh()
        b = f"127.0.0.1:{backend}"
        if t == "direct":
            out.append(Target(t, None, backend, backend))
        elif t == "sluice":
            out.append(Target(t, [args.sluice, "--workers", "1", "--listen", f"127.0.0.1:{port}",
                                  "--backend", b, "--http2", "on", "--backend-protocol", "h2c"],
                              port, backend))
        elif t == "sluice-tls":
            cert = os.path.join(args.certs, "ecdsa.pem")
            out.append(Target(t, [args.sluice, "--workers", "1", "--listen", f"127.0.0.1:{port}",
                                  "--backend", f"127.0.0.1:{tls_backend}", "--http2", "on",
                                  "--backend-protocol", "h2",
                                  "--backend-tls", f"ca={cert},server-name=localhost"],
                              port, tls_backend))
        elif t == "nginx":
            conf = os.path.join(run_dir, "nginx.conf")
            with open(conf, "w") as f:
                f.write(benchlib.nginx_conf(run_dir, "nginx", 8192, nginx_http(port, b), nofile=16384))
            out.append(Target(t, [args.nginx, "-e", os.path.join(run_dir, "nginx.error.log"),
                                  "-p", run_dir + "/", "-c", conf], port, backend))
        elif t == "haproxy":
            conf = os.path.join(run_dir, "haproxy.cfg")
            with open(conf, "w") as f:
                f.write(haproxy_cfg(port, b))
            out.append(Target(t, [args.haproxy, "-db", "-f", conf], port, backend))
        else:
            raise benchlib.HarnessError(f"unknown target {t!r} in GRPC_TARGETS (one of {' '.join(TARGETS)})")
    return out, backend, tls_backend


class Backend:
    def __init__(self, key, argv, port):
        self.key, self.argv, self.port = key, argv, port
        self.proc = None
        self.fail = ""


def start_backends(args, run_dir, k, port, tls_port):
    """The echo servers, pinned with the load; a HarnessError when one does not listen."""
    backends = [Backend("backend", [args.grpcbench, "serve", "-listen", f"127.0.0.1:{port}"], port)]
    if tls_port:
        backends.append(Backend("backend-tls", [
            args.grpcbench, "serve", "-listen", f"127.0.0.1:{tls_port}",
            "-tls-cert", os.path.join(args.certs, "ecdsa.pem"),
            "-tls-key", os.path.join(args.certs, "ecdsa.key")], tls_port))
    for b in backends:
        if not benchlib.start_pinned(b, run_dir, k["load_cpus"]):
            raise benchlib.HarnessError(f"the gRPC {b.key} did not start: {b.fail}")


def load(t, k, size, run_dir, tag, warmup_s, duration_s):
    """One run of the load against target `t`: its JSON figures plus the proxy's CPU µs per
    call over the measured window, or {"error": ...}."""
    cmd = ["taskset", "-c", k["load_cpus"], k["grpcbench"], "load",
           "-target", f"127.0.0.1:{t.port}", "-conns", str(k["conns"]),
           "-concurrency", str(k["concurrency"]), "-size", str(size),
           "-warmup", f"{warmup_s}s", "-duration", f"{duration_s}s", "-window", str(k["window"])]
    pids = benchlib.tree(t.proc.pid) if t.proc else []
    ticks = {}
    lines = []
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    benchlib.started.append(proc)
    deadline = time.monotonic() + warmup_s + duration_s + 60
    for line in proc.stdout:
        lines.append(line)
        word = line.strip()
        if word in ("measuring", "stopped"):
            ticks[word] = sum(benchlib.cputicks(x) for x in pids)
        if time.monotonic() > deadline:
            break
    try:
        proc.wait(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    text = "".join(lines)
    with open(os.path.join(run_dir, f"load-{t.key}-{size}-{tag}.txt"), "w") as f:
        f.write(" ".join(cmd) + "\n" + text)
    try:
        rec = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        rec = None
    if proc.returncode != 0 or not rec or "measuring" not in ticks or "stopped" not in ticks:
        return {"error": f"load exited {proc.returncode}: {text[-300:]!r}"}
    if rec["calls"] == 0:
        return {"error": f"no call completed in the window (stalled?), {rec['errors']} errors"
                         + (f", first: {rec['first_error']}" if rec.get("first_error") else "")}
    if t.proc:
        cpu_s = (ticks["stopped"] - ticks["measuring"]) / os.sysconf("SC_CLK_TCK")
        rec["cpu_us_per_call"] = cpu_s * 1e6 / max(rec["calls"], 1)
    return rec


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ok_runs(t, size):
    return [r for r in t.runs.get(size, []) if "error" not in r]


def report(args, k, targets, began):
    header = ["size", "path", "calls/s", "vs direct", "p50 µs", "p99 µs", "proxy CPU µs/call", "errors"]
    rows, ratios = [], []
    for size in k["sizes"]:
        direct = next((t for t in targets if t.name == "direct"), None)
        d_cps = med([r["calls_per_s"] for r in ok_runs(direct, size)]) if direct else None
        cpu = {}
        for t in targets:
            ok = ok_runs(t, size)
            if not ok:
                errs = [r["error"] for r in t.runs.get(size, []) if "error" in r]
                rows.append([str(size), t.name, t.fail or (errs[0][:80] if errs else "no run"), "", "", "", "", ""])
                continue
            cps = med([r["calls_per_s"] for r in ok])
            cpu[t.name] = med([r.get("cpu_us_per_call") for r in ok])
            rows.append([str(size), t.name, f"{cps:,.0f}",
                         f"{cps / d_cps:.2f}x" if d_cps else "",
                         f"{med([r['p50_us'] for r in ok]):,.0f}",
                         f"{med([r['p99_us'] for r in ok]):,.0f}",
                         f"{cpu[t.name]:.2f}" if cpu[t.name] is not None else "-",
                         str(sum(r["errors"] for r in ok))])
        for peer in PROXY_PEERS:
            if cpu.get("sluice") and cpu.get(peer):
                ratios.append(f"{size} B: sluice's CPU per call against {peer}'s:"
                              f" {cpu['sluice'] / cpu[peer]:.2f}x")
    method = (f"bench/grpcload/'s Go load generator (grpc-go): {k['conns']} HTTP/2 connections x"
              f" {k['concurrency']} unary calls in flight, each message SIZE bytes each way to an"
              f" echo server; {k['warmup']} s warm-up then {k['duration']} s measured, {k['runs']}"
              f" rounds rotating the paths, medians. Proxies: one worker pinned to CPU"
              f" {k['proxy_cpus']}; load and backend pinned to CPU {k['load_cpus']}. vs direct:"
              " calls per second against the load calling the backend itself. Client flow"
              " control: " + (f"static {k['window']}-byte windows (no BDP PINGs)." if k["window"]
                              else "grpc-go's default (dynamic windows, BDP PINGs)."))
    text, md = [], []
    for out, tf in ((text, benchlib.text_table), (md, benchlib.md_table)):
        out += ["## gRPC unary calls: direct and through each proxy", "", tf(header, rows), "",
                method, "", "Ratios of medians:"] + [f"- {x}" for x in ratios]
        out += ["", "### Machine", ""] + [f"- {x}" for x in args.info]
        out += [f"- command: {args.command}; run folder {args.run_dir}; harness took"
                f" {time.monotonic() - began:.0f} s"]
    benchlib.write_report(args.report, text, md, {
        "knobs": k, "runs": {t.key: t.runs for t in targets},
        "failed": {t.key: t.fail for t in targets if t.fail}})


def knobs():
    k = {
        "runs": env_int("GRPC_RUNS", 3, 1),
        "duration": env_int("GRPC_DURATION", 10, 1),
        "warmup": env_int("GRPC_WARMUP", 2),
        "conns": env_int("GRPC_CONNS", 4, 1),
        "concurrency": env_int("GRPC_CONCURRENCY", 16, 1),
        "window": env_int("GRPC_WINDOW", 0),
        "proxy_cpus": os.environ.get("GRPC_PROXY_CPUS", "1"),
        "load_cpus": os.environ.get("GRPC_LOAD_CPUS", "0"),
        "targets": os.environ.get("GRPC_TARGETS", " ".join(TARGETS)).split(),
        "sizes": [],
    }
    if k["window"] and k["window"] < 65536:
        raise benchlib.HarnessError(f"GRPC_WINDOW must be 0 or at least 65536, got {k['window']}")
    for s in os.environ.get("GRPC_SIZES", "64 16384").split():
        if not s.isdigit():
            raise benchlib.HarnessError(f"GRPC_SIZES must be whole numbers of bytes, got {s!r}")
        k["sizes"].append(int(s))
    return k


def main():
    args = benchlib.harness_args(__doc__, "bench/grpc.sh",
                                 required=("--nginx", "--haproxy", "--certs", "--grpcbench"))
    began = time.monotonic()
    k = knobs()
    k["grpcbench"] = args.grpcbench
    run_dir = os.path.abspath(args.run_dir)
    targets, bport, tls_port = make_targets(args, run_dir, benchlib.Ports(), k)
    start_backends(args, run_dir, k, bport, tls_port)
    for t in targets:
        if t.argv:
            benchlib.start_pinned(t, run_dir, k["proxy_cpus"])
        if not t.fail and k["warmup"]:
            w = load(t, k, k["sizes"][0], run_dir, "warmup", 0, k["warmup"])
            if "error" in w or w["calls"] == 0:
                t.fail = f"warm-up: {w.get('error') or 'no call succeeded: ' + w.get('first_error', '')}"
        note(f"{t.key}: {'FAILED: ' + t.fail if t.fail else 'ready'}")
    live = [t for t in targets if not t.fail]
    for rnd in range(k["runs"]):
        for size in k["sizes"]:
            for j in range(len(live)):
                t = live[(rnd + j) % len(live)]
                rec = load(t, k, size, run_dir, str(rnd), k["warmup"], k["duration"])
                t.runs.setdefault(size, []).append(rec)
                note(f"round {rnd + 1} {size} B {t.key}: " + (rec.get("error") or (
                    f"{rec['calls_per_s']:,.0f} calls/s, p99 {rec['p99_us']:,.0f} µs, "
                    + (f"{rec['cpu_us_per_call']:.2f} µs/call, " if "cpu_us_per_call" in rec else "")
                    + f"{rec['errors']} errors" + (f" (first: {rec['first_error']})" if rec["errors"] else ""))))
    report(args, k, targets, began)
    return 0


if __name__ == "__main__":
    benchlib.run_harness("grpc_driver.py", main, grace_s=2)
