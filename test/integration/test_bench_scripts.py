"""The bench scripts stay runnable (bench/README.md): every script's --help, and bench/js.sh's
handler files against the bytes bench/js.py checks before it measures, under sluice and,
when node is installed, under node's server. A benchmark that measures something else than
it says (a handler that changed, a body that differs) would fail here instead of at the
next manual run."""

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

SCRIPTS = ["proxy.sh", "chaos.sh", "coldstart.sh", "memory.sh", "js.sh", "tls.sh"]


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
