#!/usr/bin/env python3
"""Gzip end to end: sluice `--compress` against nginx `gzip on`, same level, same run.

Driven by bench/compression.sh (which builds sluice and installs nginx and wrk). One nginx backend
serves an HTML page (PAGE_KIB, text as a site's pages are: markup, words and numbers from
small sets, deterministic) without compressing it; each proxy under test runs one worker in
front of it and gzips it for a client that sends `Accept-Encoding: gzip`. wrk drives each
target in interleaved rounds. Per run: requests/s, and the proxy's CPU time (utime+stime of
its process tree, from /proc) per request and per MiB of page compressed. The figure the
issue asks for is CPU milliseconds per MiB of input, sluice against nginx at the same level:
it includes each proxy's proxying, which is the same work for both but for its cost.

Usage: compression.py --sluice BIN [--sluice-b BIN] --run-dir DIR [--levels 1,6] [--rounds 3]
               [--duration 5] [--page-kib 20] [--connections 16] [--proxy-cpus 1]
               [--load-cpus 0]
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def page(kib):
    """HTML-like text of KIB KiB: tags, words and numbers drawn from small sets."""
    words = ["<div class=\"item\">", "</div>\n", "<a href=\"/products/", "\">", "</a>",
             "price ", "sluice ", "gzip ", "window ", "stream ", "backend ", "{\"id\": ",
             ", \"name\": \"", "\"}, "]
    rng = random.Random(5)
    parts, size = [], 0
    while size < kib * 1024:
        piece = str(rng.randrange(100_000)) if rng.randrange(4) == 0 else rng.choice(words)
        parts.append(piece)
        size += len(piece)
    return "".join(parts)[: kib * 1024].encode()


def nginx_gzip_proxy(run_dir, port, backend, level):
    """nginx as the keep-alive proxy with gzip at LEVEL, as sluice's --compress is."""
    gzip = ["gzip on;", f"gzip_comp_level {level};", "gzip_vary on;", "gzip_proxied any;",
            "gzip_min_length 256;"]
    http = benchlib.nginx_proxy_http(port, backend, location=list(benchlib.NGINX_PROXY_TIMEOUTS) + gzip)
    return benchlib.nginx_conf(run_dir, f"nginx-{port}", 1024, http, nofile=4096)


class Target:
    def __init__(self, key, argv=None, conf=None):
        self.key, self.argv, self.conf = key, argv, conf
        self.proc, self.port, self.fail = None, None, None


def start(t, args):
    t.port = benchlib.freeport()
    if t.conf is not None:
        path = os.path.join(args.run_dir, f"{t.key}.conf")
        with open(path, "w") as f:
            f.write(t.conf(t.port))
        t.argv = [args.nginx, "-e", os.path.join(args.run_dir, f"{t.key}.error.log"),
                  "-p", args.run_dir + "/", "-c", path]
    else:
        t.argv = t.argv + ["--listen", f"127.0.0.1:{t.port}"]
    if not benchlib.start_pinned(t, args.run_dir, args.proxy_cpus):
        raise benchlib.HarnessError(f"{t.key}: {t.fail}")


def one_run(t, args):
    """One wrk run against T: (requests/s, CPU µs per request, CPU ms per MiB of page)."""
    url = f"http://127.0.0.1:{t.port}/page.html"
    wrk = ["taskset", "-c", args.load_cpus, "wrk", "-t1", f"-c{args.connections}",
           "-H", "Accept-Encoding: gzip", "--latency"]
    subprocess.run(wrk + ["-d1s", url], check=True, capture_output=True)  # warm-up
    ticks = os.sysconf("SC_CLK_TCK")
    before = benchlib.cputicks(t.proc.pid)
    out = subprocess.run(wrk + [f"-d{args.duration}s", url], check=True, capture_output=True,
                         text=True).stdout
    cpu_s = (benchlib.cputicks(t.proc.pid) - before) / ticks
    w = benchlib.parse_wrk(out)
    if w["non2xx"] or w["socket_errors"] or w["requests"] == 0:
        raise benchlib.HarnessError(f"{t.key}: wrk saw errors:\n{out}")
    mib = w["requests"] * args.page_kib / 1024
    return w["rps"], 1e6 * cpu_s / w["requests"], 1e3 * cpu_s / mib


def check_gzip(port):
    """The page must come back gzipped (Content-Encoding: gzip) and gunzip to the page."""
    import gzip
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request("GET", "/page.html", headers={"Accept-Encoding": "gzip"})
    r = c.getresponse()
    body = r.read()
    c.close()
    if r.status != 200 or r.getheader("Content-Encoding") != "gzip":
        raise benchlib.HarnessError(f"port {port}: {r.status}, Content-Encoding {r.getheader('Content-Encoding')}")
    return gzip.decompress(body), len(body)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sluice", required=True)
    ap.add_argument("--sluice-b")
    ap.add_argument("--nginx", default="nginx")
    ap.add_argument("--run-dir", required=True)
    ap.add_argument("--levels", default="1,6")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--page-kib", type=int, default=20)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--proxy-cpus", default="1")
    ap.add_argument("--load-cpus", default="0")
    args = ap.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    body = page(args.page_kib)
    with open(os.path.join(args.run_dir, "page.html"), "wb") as f:
        f.write(body)
    backend_port = benchlib.freeport()
    location = f"location / {{ root {args.run_dir}; default_type text/html; }}"
    conf = os.path.join(args.run_dir, "backend.conf")
    with open(conf, "w") as f:
        f.write(benchlib.nginx_conf(args.run_dir, "backend", 1024,
                                    benchlib.nginx_backend_http(backend_port, location), 4096))
    backend = benchlib.start_nginx(args.nginx, args.run_dir, "backend", conf)
    if benchlib.wait_port(backend_port, 10, backend.pid) != 0:
        raise benchlib.HarnessError("the backend nginx did not start")
    backend_addr = f"127.0.0.1:{backend_port}"
    targets = []
    for level in levels:
        sluice = [args.sluice, "--backend", backend_addr, "--workers", "1", "--compress",
                  "--compress-level", str(level)]
        targets.append(Target(f"sluice-l{level}", sluice))
        if args.sluice_b:
            targets.append(Target(f"sluice_b-l{level}", [args.sluice_b] + sluice[1:]))
        targets.append(Target(f"nginx-l{level}",
                              conf=lambda port, level=level: nginx_gzip_proxy(args.run_dir, port, backend_addr, level)))
    sizes = {}
    for t in targets:
        start(t, args)
        plain, gz_bytes = check_gzip(t.port)
        if plain != body:
            raise benchlib.HarnessError(f"{t.key}: the gunzipped page differs from the backend's")
        sizes[t.key] = gz_bytes
    results = {t.key: [] for t in targets}
    for r in range(args.rounds):
        for t in targets:
            results[t.key].append(one_run(t, args))
            print(f"round {r + 1} {t.key}: {results[t.key][-1][0]:.0f} req/s, "
                  f"{results[t.key][-1][1]:.1f} µs CPU/request, {results[t.key][-1][2]:.1f} ms CPU/MiB",
                  file=sys.stderr)
    print(f"gzip end to end: a {args.page_kib} KiB HTML page, wrk -t1 -c{args.connections}, "
          f"{args.rounds} rounds of {args.duration} s, medians; proxy on CPU {args.proxy_cpus}, "
          f"wrk on {args.load_cpus}")
    print(f"{'target':<14} {'req/s':>8} {'µs CPU/req':>11} {'ms CPU/MiB':>11} {'gzip bytes':>11} {'vs nginx':>9}")
    for t in targets:
        rps = statistics.median(x[0] for x in results[t.key])
        us = statistics.median(x[1] for x in results[t.key])
        ms = statistics.median(x[2] for x in results[t.key])
        peer = statistics.median(x[2] for x in results["nginx-" + t.key.split("-")[1]])
        print(f"{t.key:<14} {rps:>8.0f} {us:>11.1f} {ms:>11.1f} {sizes[t.key]:>11} {ms / peer:>8.2f}x")
    return 0


if __name__ == "__main__":
    benchlib.run_harness("compression", main, 2.0)
