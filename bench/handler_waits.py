#!/usr/bin/env python3
"""Handlers that wait on timers do not hold their worker (issue 25; docs/JS.md, "Timers and
suspended requests"): N clients at once, each answered by a handler that awaits a timer of
W ms, on ONE worker. A worker held by each wait would take N x W; a suspended one about W.
Prints the total time and per-request latency (min, median, max) for each N, the median of
--rounds runs. Python 3 stdlib only; sluice from zig-out/bin/sluice unless --sluice says."""

from __future__ import annotations

import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

USAGE = """Usage: bench/handler_waits.py [--sluice PATH] [--clients N,N...] [--wait-ms W] [--rounds R] [--io uring|epoll]
  N clients at once (default 50,200), each waiting W ms in the handler (default 300), on one
  worker; R rounds each (default 3), the median quoted."""

HANDLER = """
export default async function handler(request) {
  const ms = Number(request.query.ms ?? "300");
  await new Promise((resolve) => setTimeout(resolve, ms));
  return Response.text("waited " + ms + "\\n");
}
"""


def parse(argv):
    options = {"sluice": "zig-out/bin/sluice", "clients": [50, 200], "wait_ms": 300, "rounds": 3, "io": None}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-h", "--help"):
            print(USAGE)
            sys.exit(0)
        if arg not in ("--sluice", "--clients", "--wait-ms", "--rounds", "--io"):
            print(f"bench/handler_waits.py: unknown argument {arg!r}\n{USAGE}", file=sys.stderr)
            sys.exit(2)
        if i + 1 == len(argv):
            print(f"bench/handler_waits.py: {arg} needs a value\n{USAGE}", file=sys.stderr)
            sys.exit(2)
        value = argv[i + 1]
        if arg == "--sluice":
            options["sluice"] = value
        elif arg == "--clients":
            options["clients"] = [int(n) for n in value.split(",")]
        elif arg == "--wait-ms":
            options["wait_ms"] = int(value)
        elif arg == "--rounds":
            options["rounds"] = int(value)
        else:
            options["io"] = value
        i += 2
    return options


def get(port, target):
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(f"GET {target} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    return int(data.split(b" ", 2)[1])


def round_of(port, clients, wait_ms):
    latencies = [0.0] * clients
    statuses = [0] * clients
    barrier = threading.Barrier(clients + 1)

    def client(i):
        barrier.wait()
        started = time.monotonic()
        statuses[i] = get(port, f"/?ms={wait_ms}")
        latencies[i] = time.monotonic() - started

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.monotonic()
    for t in threads:
        t.join()
    total = time.monotonic() - started
    if any(s != 200 for s in statuses):
        raise SystemExit(f"bench/handler_waits.py: statuses {sorted(set(statuses))}, not all 200")
    latencies.sort()
    return total, latencies[0], latencies[clients // 2], latencies[-1]


def main():
    options = parse(sys.argv[1:])
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "app.js"), "w") as f:
            f.write(HANDLER)
        suspended = max(options["clients"])
        deadline_ms = 10 * options["wait_ms"] + 5000
        with open(os.path.join(folder, "site.zon"), "w") as f:
            f.write(f'.{{ .listen = "127.0.0.1:0", .handlers = .{{ .app = .{{ .file = "app.js", '
                    f'.deadline = "{deadline_ms}ms", .suspended_max = {suspended} }} }}, '
                    f'.routes = .{{ .{{ .handler = "app" }} }} }}\n')
        command = [options["sluice"], "--config", os.path.join(folder, "site.zon"), "--workers", "1"]
        if options["io"]:
            command.append(f"--io={options['io']}")
        process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
        try:
            port = None
            for line in process.stderr:
                match = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
                if match:
                    port = int(match.group(1))
                    break
            if port is None:
                raise SystemExit("bench/handler_waits.py: sluice did not start")
            get(port, "/?ms=1")  # Warm up.
            print(f"one worker, each client's handler waits {options['wait_ms']} ms "
                  f"(a held worker would take clients x {options['wait_ms']} ms):")
            for clients in options["clients"]:
                runs = [round_of(port, clients, options["wait_ms"]) for _ in range(options["rounds"])]
                total, low, median, high = (statistics.median(r[k] for r in runs) for k in range(4))
                print(f"  {clients:5d} clients: total {total * 1000:7.0f} ms; per request min {low * 1000:.0f}, "
                      f"median {median * 1000:.0f}, max {high * 1000:.0f} ms (median of {options['rounds']})")
        finally:
            process.terminate()
            process.wait(10)


if __name__ == "__main__":
    main()
