"""The bench scripts stay runnable (bench/README.md): every script's --help, and bench/js.sh's
handler files against the bytes bench/js.py checks before it measures, under sluice and,
when node is installed, under node's server; and bench/grpcload/'s load generator and echo
server (when Go >= 1.26 is installed): calls through sluice counted and checked on both I/O
backends, failed calls counted as errors. A benchmark that measures something else than
it says (a handler that changed, a body that differs) would fail here instead of at the
next manual run."""

import json
import os
import shutil
import socket
import subprocess
import sys
import time

import pytest

from client import request
from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))
import js as js_bench  # noqa: E402 - bench/js.py

SCRIPTS = ["proxy.sh", "chaos.sh", "coldstart.sh", "memory.sh", "js.sh", "tls.sh", "grpc.sh", "compression.sh", "handler_waits.py"]


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_prints_the_usage(script):
    r = subprocess.run([str(REPO / "bench" / script), "--help"], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert f"Usage: bench/{script}" in r.stdout


@pytest.mark.parametrize("script", SCRIPTS)
def test_an_unknown_argument_is_refused(script):
    r = subprocess.run([str(REPO / "bench" / script), "--nonsense"], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2
    assert "unknown argument '--nonsense'" in r.stderr


def branch_answers(port):
    out = []
    for path, headers, _, _ in js_bench.BRANCHES:
        r = request(port, "GET", path, timeout=10,
                    headers=[("User-Agent", js_bench.USER_AGENT), *headers.items()])
        out.append((r.status, r.body))
    return out


WANT = [(status, body) for _, _, status, body in js_bench.BRANCHES]


def test_js_handler_answers_what_the_benchmark_checks(sluice):
    app = REPO / "bench" / "js" / "app.js"
    sluice.start(args=["--handler-file", f"app={app}", "--handler", "app"])
    assert branch_answers(sluice.port) == WANT


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_peer_answers_the_same_bytes():
    port = free_port()
    proc = subprocess.Popen(["node", str(REPO / "bench" / "js" / "node.mjs"), str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()
                assert time.monotonic() < deadline, "node never listened"
                time.sleep(0.05)
        assert branch_answers(port) == WANT
    finally:
        proc.kill()
        proc.wait(timeout=5)


# --- bench/grpcload/: the gRPC load and echo server bench/grpc.sh builds --------------------

def go_command():
    """GO, go on PATH or /usr/local/go/bin/go when it is Go >= 1.26 (grpc-go 1.85's floor),
    as bench/grpc.sh looks for it; None otherwise."""
    for go in (os.environ.get("GO"), shutil.which("go"), "/usr/local/go/bin/go"):
        if not go or not os.access(go, os.X_OK):
            continue
        v = subprocess.run([go, "env", "GOVERSION"], capture_output=True, text=True).stdout
        parts = v.strip().removeprefix("go").split(".")
        if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit() and \
                (int(parts[0]), int(parts[1])) >= (1, 26):
            return go
    return None


@pytest.fixture(scope="session")
def grpcbench(tmp_path_factory):
    go = go_command()
    if go is None:
        pytest.skip("Go >= 1.26 is not installed (bench/grpc.sh needs it too)")
    out = tmp_path_factory.mktemp("grpcbench") / "grpcbench"
    r = subprocess.run([go, "build", "-o", str(out), "."], cwd=REPO / "bench" / "grpcload",
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return str(out)


def run_load(grpcbench, port, *flags):
    """One short `grpcbench load` run: its stdout lines and its JSON figures."""
    r = subprocess.run([grpcbench, "load", "-target", f"127.0.0.1:{port}", "-conns", "2",
                        "-concurrency", "4", "-warmup", "0s", "-duration", "1s", "-timeout", "2s",
                        *flags], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    return lines, json.loads(lines[-1])


def test_grpc_load_through_sluice_counts_calls_and_checks_answers(sluice, grpcbench):
    port = free_port()
    server = subprocess.Popen([grpcbench, "serve", "-listen", f"127.0.0.1:{port}"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout.readline() == f"listening on 127.0.0.1:{port}\n"
        sluice.start([f"127.0.0.1:{port}"], args=["--http2", "on", "--backend-protocol", "h2c"])
        for size in ("64", "16384"):
            lines, figures = run_load(grpcbench, sluice.port, "-size", size, "-window", "1048576")
            assert lines[:2] == ["measuring", "stopped"]
            assert figures["errors"] == 0, figures.get("first_error")
            assert figures["calls"] > 0
            assert 0 < figures["p50_us"] <= figures["p99_us"]
    finally:
        server.kill()
        server.wait(timeout=5)


def test_grpc_load_counts_calls_that_fail(grpcbench):
    port = free_port()  # nothing listens: every call fails, none counts
    _, figures = run_load(grpcbench, port)
    assert figures["calls"] == 0
    assert figures["errors"] > 0
    assert "Unavailable" in figures["first_error"]
