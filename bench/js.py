#!/usr/bin/env python3
"""JavaScript handler driver for bench/js.sh (Python 3 stdlib only).

One handler (bench/js/app.js, issue 13's), its JSON branch measured under sluice (compiled at
start-up from --handler-file, and compiled into a ReleaseFast binary with -Dhandler) and the
same logic under node's `http` server (bench/js/node.mjs), Bun.serve and Deno.serve
(bench/js/fetch.js). Every server runs as one process pinned to JS_SERVER_CPUS with taskset
(sluice with --workers 1); wrk runs pinned to JS_LOAD_CPUS.

1. Bodies: before anything is measured, every server must answer the three branches with the
   same status and the same body bytes (`GET /api/hello?name=ada` with `User-Agent: bench`,
   and `GET /private` without and with `Authorization`); a server that differs is a FAILED row.
2. Throughput: JS_RUNS interleaved rounds (every server once per round, rotated), each a
   JS_WARMUP s warm-up then `wrk -t1 -cJS_CONNECTIONS -dJS_DURATION s --latency` on the
   JSON branch; req/s, p50/p90/p99 and the server's CPU time (/proc, all its threads) per
   request, through benchlib.measure.
3. fetch to a pool (issue 25's target: at most 1.3x): one sluice (JS_SERVER_CPUS, --workers
   1) in front of nginx answering `200 "hello\n"`, with bench/handler_fetch.py's handler: its
   `/fetch` fetches the pool and returns the answer with a header added, its `/proxy` is a plain
   `Response.proxy` to the same pool; JS_RUNS rounds of both, order alternated, CPU per
   request as above. JS_FETCH=0 leaves it out.
4. Cold start: spawn to the first 200 of the JSON branch (coldstart.py's timed run, fresh port
   each run, interleaved), JS_COLD_RUNS runs each, beside sluice without a handler proxying
   to an nginx backend (bench/coldstart.sh's sluice-w1 row).

A measurement, not a test: exits non-zero only when the harness breaks.
Knobs come from the environment; bench/js.sh --help lists them.
"""

import contextlib
import http.client
import io
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402 - next to this file
import coldstart  # noqa: E402
import handler_fetch  # noqa: E402 - its handler and site are the fetch case's
from benchlib import HarnessError, env_int  # noqa: E402

note = benchlib.make_note("js")

PATH = "/api/hello?name=ada"
USER_AGENT = "bench"
WANT_JSON = b'{"hello":"ada","via":"bench"}'
# (path, extra headers, status, body): the three branches every server must answer alike.
BRANCHES = [(PATH, {}, 200, WANT_JSON),
            ("/private", {}, 401, b"login first\n"),
            ("/private", {"Authorization": "Bearer x"}, 200, b"ok\n")]
COLD_REQUEST = (f"GET {PATH} HTTP/1.1\r\nHost: x\r\nUser-Agent: {USER_AGENT}\r\n"
                "Connection: close\r\n\r\n").encode()


class Server:
    def __init__(self, name, label, argv, env=None):
        self.name, self.label, self.argv, self.env = name, label, argv, env
        self.proc = None
        self.port = None
        self.fail = ""
        self.content_type = ""
        self.runs = []


def servers(args, js_dir, run_dir, targets):
    app = os.path.join(js_dir, "app.js")
    fetch_js = os.path.join(js_dir, "fetch.js")
    deno_env = dict(os.environ, DENO_DIR=os.path.join(run_dir, "deno-dir"),
                    DENO_NO_UPDATE_CHECK="1", NO_COLOR="1")
    table = {
        "sluice": ("sluice --handler-file (ReleaseSafe)", lambda p: [
            args.sluice, "--workers", "1", "--listen", f"127.0.0.1:{p}",
            "--handler-file", f"app={app}", "--handler", "app"], None),
        "sluice-embedded": ("sluice -Dhandler (ReleaseFast, compiled in)", lambda p: [
            args.sluice_embedded, "--workers", "1", "--listen", f"127.0.0.1:{p}",
            "--handler", "app"], None),
        # Another sluice binary (JS_BASELINE_BIN: main's, say) run exactly as the sluice row,
        # for an A/B of a change in the same rounds.
        "sluice-baseline": ("sluice --handler-file, JS_BASELINE_BIN", lambda p: [
            args.sluice_baseline, "--workers", "1", "--listen", f"127.0.0.1:{p}",
            "--handler-file", f"app={app}", "--handler", "app"], None),
        "node": ("node http", lambda p: [args.node, os.path.join(js_dir, "node.mjs"), str(p)],
                 None),
        "bun": ("Bun.serve", lambda p: [args.bun, fetch_js, str(p)], None),
        "deno": ("Deno.serve", lambda p: [args.deno, "run", "--allow-net", fetch_js, str(p)],
                 deno_env),
    }
    out = []
    for t in targets:
        if t not in table:
            raise HarnessError(f"JS_TARGETS: unknown target {t!r} ({', '.join(table)})")
        label, argv, env = table[t]
        s = Server(t, label, argv, env)
        binary = {"sluice-embedded": args.sluice_embedded, "sluice-baseline": args.sluice_baseline,
                  "node": args.node, "bun": args.bun, "deno": args.deno}.get(t, args.sluice)
        if not binary:
            s.fail = "not available (see the set-up log)"
        out.append(s)
    return out


def get(port, path, headers):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request("GET", path, headers={"Host": "x", "User-Agent": USER_AGENT, **headers})
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, body, r.getheader("content-type", "")


def start(s, ports, run_dir, cpus):
    s.port = ports.fresh()
    log = open(os.path.join(run_dir, f"{s.name}.log"), "ab")
    argv = ["taskset", "-c", cpus] + s.argv(s.port)
    s.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=s.env)
    benchlib.started.append(s.proc)
    if benchlib.wait_port(s.port, 20, s.proc.pid) != 0:
        s.fail = f"did not listen (see {run_dir}/{s.name}.log)"
        return
    for path, headers, status, body in BRANCHES:
        try:
            got = get(s.port, path, headers)
        except OSError as e:
            s.fail = f"{path}: {type(e).__name__}: {e}"
            return
        if got[:2] != (status, body):
            s.fail = f"{path} {headers or ''}: got {got[0]} {got[1][:80]!r}, want {status} {body!r}"
            return
        if path == PATH:
            s.content_type = got[2]


def measure(s, rnd, k, run_dir, path=PATH):
    url = f"http://127.0.0.1:{s.port}{path}"
    wrk = ["wrk", "-t1", f"-c{k['connections']}", "--latency", "-H", f"User-Agent: {USER_AGENT}"]
    outfile = os.path.join(run_dir, f"wrk-{s.name}-{rnd}.txt")
    if k["warmup"]:
        subprocess.run(["taskset", "-c", k["load_cpus"]] + wrk + [f"-d{k['warmup']}s", url],
                       stdout=subprocess.DEVNULL, timeout=k["warmup"] + 30, check=False)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        benchlib.measure([s.name, str(rnd), "1", outfile, str(s.proc.pid), "-",
                          str(k["duration"] + 30), k["load_cpus"], "--"]
                         + wrk + [f"-d{k['duration']}s", url])
    rec = json.loads(buf.getvalue())
    s.runs.append(rec)
    return rec


def fetch_case(args, k, ports, run_dir, backend_port):
    """sluice with handler_fetch's handler: `/proxy` and `/fetch` measured in alternating
    rounds. Returns the two Servers (each with its runs), or one with `fail` set."""
    port = ports.fresh()
    with open(os.path.join(run_dir, "edge.js"), "w") as f:
        f.write(handler_fetch.HANDLER)
    config = os.path.join(run_dir, "fetch-site.zon")
    with open(config, "w") as f:
        f.write(handler_fetch.SITE.replace("PORT", str(port)).replace("BACKEND", str(backend_port)))
    proxy = Server("fetch-proxy", "Response.proxy(\"app\")", None)
    fetched = Server("fetch", "fetch(\"http://app/\") + a changed header", None)
    log = open(os.path.join(run_dir, "fetch-sluice.log"), "ab")
    proc = subprocess.Popen(["taskset", "-c", k["server_cpus"], args.sluice, "--config", config,
                             "--workers", "1"], stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    benchlib.started.append(proc)
    for s in (proxy, fetched):
        s.proc, s.port = proc, port
    if benchlib.wait_port(port, 20, proc.pid) != 0:
        proxy.fail = f"did not listen (see {run_dir}/fetch-sluice.log)"
        return [proxy]
    for s, path in ((proxy, "/proxy"), (fetched, "/fetch")):
        status, body, _ = get(port, path, {})
        if status != 200 or body != b"hello\n":
            s.fail = f"{path}: got {status} {body[:80]!r}, want 200 b'hello\\n'"
    if proxy.fail or fetched.fail:
        return [s for s in (proxy, fetched) if s.fail]
    for rnd in range(k["runs"]):
        order = ((proxy, "/proxy"), (fetched, "/fetch"))
        for s, path in order if rnd % 2 == 0 else order[::-1]:
            rec = measure(s, rnd, k, run_dir, path)
            note(f"fetch case round {rnd + 1}/{k['runs']} {path}: "
                 + (rec.get("error") or f"{rec['rps']:,.0f} req/s, "
                    f"{rec.get('proxy_cpu_us_per_req', 0):.2f} µs CPU/req"))
    benchlib.stop_tree(proc, 2)
    return [proxy, fetched]


def cold_contenders(args, backend_port, targets, table):
    """coldstart.Contender rows: each server's JSON branch, and sluice without a handler."""
    out = [coldstart.Contender(
        "sluice-proxy", "sluice --workers 1, no handler (proxy to nginx; the reference)",
        lambda p: [args.sluice, "--workers", "1", "--listen", f"127.0.0.1:{p}",
                   "--backend", f"127.0.0.1:{backend_port}"])]
    for s in table:
        if s.name in targets and not s.fail:
            c = coldstart.Contender(s.name, s.label, s.argv, request=COLD_REQUEST,
                                    expect=WANT_JSON)
            c.env = s.env
            out.append(c)
    return out


def cold_start(contenders, k, ports, run_dir):
    devnull = open(os.devnull, "rb")
    for c in contenders:
        c.log = open(os.path.join(run_dir, f"cold-{c.name}.log"), "ab")
    ck = {"poll_us": 20, "timeout": 10}
    n = len(contenders)
    for i in range(k["cold_warmup"] + k["cold_runs"]):
        for j in range(n):
            c = contenders[(i + j) % n]
            env = getattr(c, "env", None)
            with env_as(env):
                rec = coldstart.timed_run(c, ports.fresh(), ck, devnull)
            (c.warmups if i < k["cold_warmup"] else c.runs).append(rec)


@contextlib.contextmanager
def env_as(env):
    """Popen inherits os.environ: Deno's own (DENO_DIR in the run folder) for one run."""
    if env is None:
        yield
        return
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


# --- report ----------------------------------------------------------------------------

def med(recs, key):
    vals = [r[key] for r in recs if key in r and "error" not in r]
    return statistics.median(vals) if vals else None


def fmt(v, spec):
    return "—" if v is None else format(v, spec)


def fetch_lines(k, fetch_table, table_fn):
    """The fetch case's table and its ratio, or nothing when it was left out."""
    if not fetch_table:
        return []
    header = ["route", "req/s", "p99 µs", "CPU µs/req", "runs"]
    rows, cpu = [], {}
    for s in fetch_table:
        if s.fail:
            rows.append([s.label, f"FAILED: {s.fail}", "—", "—", "—"])
            continue
        cpu[s.name] = med(s.runs, "proxy_cpu_us_per_req")
        ok = sum(1 for r in s.runs if "error" not in r)
        rows.append([s.label, fmt(med(s.runs, "rps"), ",.0f"), fmt(med(s.runs, "p99_us"), ".0f"),
                     fmt(cpu[s.name], ".2f"), f"{ok}/{len(s.runs)}"])
    out = ["", "### fetch to a pool", "", table_fn(header, rows), "",
           "One sluice (--workers 1, pinned as above) in front of nginx answering `200 \"hello\\n\"`"
           " (bench/handler_fetch.py's handler and site): `/fetch` awaits `fetch(\"http://app/\")`"
           " and returns `new Response(r.body, { status, headers })` with `x-edge` set; `/proxy`"
           " is `Response.proxy(\"app\", { path: \"/\" })`. Same wrk command and CPU measure as"
           f" above, {k['runs']} rounds, order alternated, medians."]
    if cpu.get("fetch") and cpu.get("fetch-proxy"):
        r = cpu["fetch"] / cpu["fetch-proxy"]
        out.append(f"- fetch / Response.proxy: CPU per request {r:.2f}× (target ≤ 1.3×:"
                   f" {'met' if r <= 1.3 else 'missed'})")
    return out


def report(args, k, table, cold, began, fetch_table=()):
    text, md = [], []
    header = ["server", "req/s", "p50 µs", "p90 µs", "p99 µs", "CPU µs/req", "req/s per core",
              "core busy", "other load", "runs", "content-type"]
    rows, summary = [], {}
    for s in table:
        if s.fail:
            rows.append([s.label, f"FAILED: {s.fail}"] + ["—"] * (len(header) - 2))
            continue
        m = {key: med(s.runs, key) for key in ("rps", "p50_us", "p90_us", "p99_us",
                                               "proxy_cpu_us_per_req", "proxy_busy",
                                               "foreign_cores")}
        summary[s.name] = m
        ok = sum(1 for r in s.runs if "error" not in r)
        rows.append([s.label, fmt(m["rps"], ",.0f"), fmt(m["p50_us"], ".0f"),
                     fmt(m["p90_us"], ".0f"), fmt(m["p99_us"], ".0f"),
                     fmt(m["proxy_cpu_us_per_req"], ".2f"),
                     fmt(1e6 / m["proxy_cpu_us_per_req"] if m["proxy_cpu_us_per_req"] else None,
                         ",.0f"), fmt(m["proxy_busy"], ".0%"),
                     fmt(m["foreign_cores"], ".2f"), f"{ok}/{len(s.runs)}", s.content_type])
    ratios = ratio_lines(summary)
    cheader = ["server", "median ms", "p90 ms", "min ms", "CPU ms", "÷ sluice, no handler",
               "runs ok/failed"]
    crows = []
    ref = coldstart.summarize(cold[0].runs) if cold else None
    for c in cold:
        cs = coldstart.summarize(c.runs)
        if cs is None:
            err = next((r["error"] for r in c.runs if not r["ok"]), "no runs")
            crows.append([c.label, f"FAILED: {err}"] + ["—"] * 5)
            continue
        crows.append([c.label, coldstart.ms(cs["median"]), coldstart.ms(cs["p90"]),
                      coldstart.ms(cs["min"]), coldstart.ms(cs["cpu"]),
                      f"{cs['median'] / ref['median']:.2f}×" if ref else "—",
                      f"{cs['n']}/{cs['failed']}"])
    title = (f"JavaScript handler: `GET {PATH}` (JSON branch), one process pinned to CPU"
             f" {k['server_cpus']}, wrk on CPU {k['load_cpus']}, {k['runs']} rounds × {k['duration']} s,"
             f" medians")
    method = (f"wrk -t1 -c{k['connections']} -d{k['duration']}s --latency -H 'User-Agent: bench'"
              f" http://127.0.0.1:PORT{PATH}, after a {k['warmup']} s warm-up; CPU µs/req = the"
              " server's utime+stime (/proc/PID/stat, every thread) over wrk's run ÷ requests;"
              " req/s per core = 10^6 ÷ that: what the server would do with its core saturated"
              " (the req/s column is bound by the load side whenever core busy is well under"
              " 100%);"
              " other load = busy CPU of the machine less the server and wrk, in cores (this"
              " machine is shared: see it before quoting absolute figures). Bodies checked"
              f" byte-identical before measuring: {WANT_JSON.decode()}, `login first\\n` (401),"
              " `ok\\n`.")
    cold_method = (f"cold start: spawn (Popen) to the last byte of the first 200 of GET {PATH}"
                   f" (Connection: close), {k['cold_runs']} runs after {k['cold_warmup']} warm-up"
                   " each, interleaved, fresh port each run (coldstart.py's timed run), not"
                   " pinned. zigttp publishes 3.5 ms as its floor and 7–15 ms as typical for the"
                   " same measure (its figures, its machine: cited, not measured here).")
    for out, table_fn in ((text, benchlib.text_table), (md, benchlib.md_table)):
        out += [f"## {title}", "", table_fn(header, rows), "", method, "", "Ratios of medians:"]
        out += [f"- {x}" for x in ratios]
        out += fetch_lines(k, fetch_table, table_fn)
        out += ["", "### Cold start", "", table_fn(cheader, crows), "", cold_method]
        out += cold_ratio_lines(cold)
        out += ["", "### Machine", ""] + [f"- {x}" for x in args.info]
        out += [f"- command: {args.command}; run folder {args.run_dir}; harness took"
                f" {time.monotonic() - began:.0f} s"]
    benchlib.write_report(args.report, text, md, {
        "knobs": k, "summary": summary,
        "runs": {s.name: s.runs for s in list(table) + list(fetch_table)},
        "cold": {c.name: {"warmup": c.warmups, "measured": c.runs} for c in cold}})


def ratio_lines(summary):
    lines = []
    a, b = summary.get("sluice"), summary.get("sluice-baseline")
    if a and b and a["rps"] and b["rps"]:
        lines.append(f"sluice / sluice-baseline: req/s {a['rps'] / b['rps']:.3f}×; CPU per request"
                     f" {a['proxy_cpu_us_per_req'] / b['proxy_cpu_us_per_req']:.3f}×")
    for mine in ("sluice", "sluice-embedded"):
        a = summary.get(mine)
        if not a or not a["rps"]:
            continue
        for peer, rps_target, cpu_target in (("node", 2.0, 0.5), ("bun", 1.2, None),
                                             ("deno", None, None)):
            b = summary.get(peer)
            if not b or not b["rps"]:
                continue
            r = a["rps"] / b["rps"]
            c = a["proxy_cpu_us_per_req"] / b["proxy_cpu_us_per_req"]
            t1 = f" (target ≥ {rps_target}×: {'met' if r >= rps_target else 'missed'})" if rps_target else ""
            t2 = f" (target ≤ {cpu_target}×: {'met' if c <= cpu_target else 'missed'})" if cpu_target else ""
            t3 = f" (≥ {rps_target}×: {'met' if 1 / c >= rps_target else 'missed'})" if rps_target else ""
            lines.append(f"{mine} / {peer}: req/s {r:.2f}×{t1}; CPU per request {c:.2f}×{t2};"
                         f" req/s per core {1 / c:.2f}×{t3}")
    return lines


def cold_ratio_lines(cold):
    ref = coldstart.summarize(cold[0].runs) if cold else None
    lines = []
    for c in cold[1:]:
        cs = coldstart.summarize(c.runs)
        if ref and cs and c.name.startswith("sluice"):
            r = cs["median"] / ref["median"]
            lines.append(f"- {c.name} / sluice without a handler: {r:.2f}× (target ≤ 1.1×:"
                         f" {'met' if r <= 1.1 else 'missed'})")
    return [""] + lines if lines else []


# --- main ------------------------------------------------------------------------------

def main():
    args = benchlib.harness_args(__doc__, "bench/js.sh", required=("--nginx", "--js-dir"),
                                 optional=("--sluice-embedded", "--sluice-baseline", "--node", "--bun",
                                           "--deno"))
    began = time.monotonic()
    k = {
        "runs": env_int("JS_RUNS", 3, 1),
        "duration": env_int("JS_DURATION", 8, 1),
        "warmup": env_int("JS_WARMUP", 2),
        "connections": env_int("JS_CONNECTIONS", 50, 1),
        "cold_runs": env_int("JS_COLD_RUNS", 20),
        "cold_warmup": env_int("JS_COLD_WARMUP", 2),
        "server_cpus": os.environ.get("JS_SERVER_CPUS", "1"),
        "load_cpus": os.environ.get("JS_LOAD_CPUS", "0"),
        "targets": os.environ.get("JS_TARGETS", "sluice sluice-embedded node bun deno").split(),
        "fetch": env_int("JS_FETCH", 1),
    }
    if not coldstart.become_subreaper():
        note("could not become a child subreaper; orphans are left to init")
    run_dir = os.path.abspath(args.run_dir)
    ports = benchlib.Ports()
    table = servers(args, args.js_dir, run_dir, k["targets"])
    for s in table:
        if not s.fail:
            start(s, ports, run_dir, k["server_cpus"])
        note(f"{s.name}: {'FAILED: ' + s.fail if s.fail else 'up on :' + str(s.port)}")
    live = [s for s in table if not s.fail]
    for rnd in range(k["runs"]):
        for j in range(len(live)):
            s = live[(rnd + j) % len(live)]
            rec = measure(s, rnd, k, run_dir)
            note(f"round {rnd + 1}/{k['runs']} {s.name}: "
                 + (rec.get("error") or f"{rec['rps']:,.0f} req/s, "
                    f"{rec.get('proxy_cpu_us_per_req', 0):.2f} µs CPU/req,"
                    f" other load {rec['foreign_cores']:.2f} cores"))
    for s in live:
        benchlib.stop_tree(s.proc, 2)
    cold, fetch_table = [], []
    backend_port = None
    if k["fetch"] or k["cold_runs"]:
        # One nginx for both: the fetch case's pool and the cold start's reference backend.
        backend_port = ports.fresh()
        benchlib.start_hello_backend(args.nginx, run_dir, backend_port, conns=1024, nofile=None,
                                     backlog=1024)
    if k["fetch"]:
        fetch_table = fetch_case(args, k, ports, run_dir, backend_port)
    if k["cold_runs"]:
        cold = cold_contenders(args, backend_port, k["targets"], table)
        note(f"cold start: {len(cold)} servers × {k['cold_runs']} runs")
        cold_start(cold, k, ports, run_dir)
    report(args, k, table, cold, began, fetch_table)
    return 0


if __name__ == "__main__":
    benchlib.run_harness("js.py", main, grace_s=2, after=coldstart.reap_orphans)
