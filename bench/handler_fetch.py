#!/usr/bin/env python3
"""A handler that fetches from a pool and returns its answer with a changed header, against
the same request handed to the pool with `Response.proxy` (issue 25's target: CPU per request
at most 1.3x; docs/ARCHITECTURE.md, "`fetch` to pools"). One sluice worker pinned to one CPU
in front of nginx answering `200 "hello\\n"`; wrk pinned to another, keep-alive, the two
routes measured in alternating rounds. CPU per request is sluice's utime+stime over the
requests wrk completed. Prints each round and the medians. Python 3 stdlib, wrk, nginx,
taskset; sluice from zig-out/bin/sluice (build it ReleaseSafe) unless --sluice says."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

USAGE = """Usage: bench/handler_fetch.py [--sluice PATH] [--rounds R] [--seconds S] [--connections C]
  [--server-cpus LIST] [--load-cpus LIST] [--io uring|epoll]
  R rounds (default 5) of S seconds (default 5) per route, C wrk connections (default 16)."""

HANDLER = """
export default async function handler(request) {
  if (request.path === "/proxy") return Response.proxy("app", { path: "/" });
  const r = await fetch("http://app/");
  const headers = new Headers(r.headers);
  headers.set("x-edge", "1");
  return new Response(r.body, { status: r.status, headers });
}
"""

SITE = """.{
    .listen = "127.0.0.1:PORT",
    .handlers = .{ .edge = .{ .file = "edge.js", .deadline = "1s" } },
    .pools = .{ .app = .{ .backends = .{"127.0.0.1:BACKEND"} } },
    .routes = .{.{ .handler = "edge" }},
}
"""


def parse(argv):
    options = {"sluice": "zig-out/bin/sluice", "rounds": 5, "seconds": 5, "connections": 16,
               "server_cpus": "1", "load_cpus": "0", "io": None}
    names = {"--sluice": "sluice", "--rounds": "rounds", "--seconds": "seconds",
             "--connections": "connections", "--server-cpus": "server_cpus",
             "--load-cpus": "load_cpus", "--io": "io"}
    i = 0
    while i < len(argv):
        if argv[i] in ("-h", "--help"):
            print(USAGE)
            sys.exit(0)
        if argv[i] not in names or i + 1 == len(argv):
            print(f"bench/handler_fetch.py: bad argument {argv[i]!r}\n{USAGE}", file=sys.stderr)
            sys.exit(2)
        key = names[argv[i]]
        options[key] = argv[i + 1] if key in ("sluice", "server_cpus", "load_cpus", "io") else int(argv[i + 1])
        i += 2
    return options


def run_wrk(port, path, options):
    out = subprocess.run(["taskset", "-c", options["load_cpus"], "wrk", "-t1", f"-c{options['connections']}",
                          f"-d{options['seconds']}s", "--latency", f"http://127.0.0.1:{port}{path}"],
                         capture_output=True, text=True, timeout=options["seconds"] + 30)
    return benchlib.parse_wrk(out.stdout)


def measure(pid, port, path, options):
    """One wrk run: requests per second, CPU µs per request, p99, errors."""
    before = benchlib.cputicks(pid)
    result = run_wrk(port, path, options)
    ticks = benchlib.cputicks(pid) - before
    cpu_us = ticks * 1e6 / os.sysconf("SC_CLK_TCK") / max(1, result["requests"])
    return {"rps": result["rps"], "cpu_us": cpu_us, "p99_us": result["p99_us"],
            "errors": result["socket_errors"] + result["non2xx"]}


def need_tools():
    """wrk, nginx, curl and taskset, installed from Debian when missing, as the shell benches
    install theirs (common.sh's `need_tools`)."""
    common = os.path.join(os.path.dirname(os.path.abspath(__file__)), "common.sh")
    subprocess.run(["bash", "-c", f'source "{common}" && need_tools wrk nginx curl taskset:util-linux'], check=True)


def main(options):
    need_tools()
    run_dir = tempfile.mkdtemp(prefix="sluice-handler-fetch-")
    backend_port = benchlib.freeport()
    benchlib.start_hello_backend(subprocess.check_output(["sh", "-c", "command -v nginx"], text=True).strip(),
                                 run_dir, backend_port)
    port = benchlib.freeport()
    with open(os.path.join(run_dir, "edge.js"), "w") as f:
        f.write(HANDLER)
    config = os.path.join(run_dir, "site.zon")
    with open(config, "w") as f:
        f.write(SITE.replace("PORT", str(port)).replace("BACKEND", str(backend_port)))
    argv = ["taskset", "-c", options["server_cpus"], options["sluice"], "--config", config, "--workers", "1"]
    if options["io"]:
        argv.append(f"--io={options['io']}")
    log = open(os.path.join(run_dir, "sluice.log"), "ab")
    proc = subprocess.Popen(argv, stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
    benchlib.started.append(proc)
    if benchlib.wait_port(port, 10, proc.pid) != 0:
        raise benchlib.HarnessError(f"sluice did not listen (see {run_dir}/sluice.log)")
    for path in ("/proxy", "/fetch"):  # Warm-up, and a check of both answers.
        body = subprocess.run(["curl", "-si", f"http://127.0.0.1:{port}{path}"], capture_output=True,
                              text=True, timeout=10).stdout
        if "hello" not in body or (path == "/fetch" and "x-edge: 1" not in body.lower()):
            raise benchlib.HarnessError(f"{path} answered {body!r}")
        run_wrk(port, path, dict(options, seconds=1))
    rows = {"/proxy": [], "/fetch": []}
    for round_index in range(options["rounds"]):
        order = ("/proxy", "/fetch") if round_index % 2 == 0 else ("/fetch", "/proxy")
        for path in order:
            m = measure(proc.pid, port, path, options)
            rows[path].append(m)
            print(f"round {round_index + 1} {path:7} {m['rps']:9.0f} req/s  {m['cpu_us']:6.2f} µs CPU/req  "
                  f"p99 {m['p99_us'] / 1000:6.2f} ms  errors {m['errors']}", flush=True)
    medians = {path: statistics.median(m["cpu_us"] for m in runs) for path, runs in rows.items()}
    rps = {path: statistics.median(m["rps"] for m in runs) for path, runs in rows.items()}
    print(f"median: Response.proxy {medians['/proxy']:.2f} µs CPU/req ({rps['/proxy']:.0f} req/s), "
          f"fetch + changed header {medians['/fetch']:.2f} µs CPU/req ({rps['/fetch']:.0f} req/s): "
          f"{medians['/fetch'] / medians['/proxy']:.2f}x")
    print(f"command: bench/handler_fetch.py {' '.join(sys.argv[1:])}; machine: {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    opts = parse(sys.argv[1:])
    try:
        code = main(opts)
    finally:
        benchlib.cleanup(1.0)
    sys.exit(code)
