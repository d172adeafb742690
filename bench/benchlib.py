#!/usr/bin/env python3
"""Helpers for bench/proxy.sh (stdlib only).

Subcommands (all print to stdout, errors to stderr, non-zero exit on failure):

  freeport                          a free TCP port on 127.0.0.1
  wait-port PORT TIMEOUT_S PID      wait until 127.0.0.1:PORT accepts; fail early if PID dies
  smoke PORT                        GET http://127.0.0.1:PORT/ must answer 200 "hello\\n"
  tree PID                          PID and all its descendants, one per line
  cputicks PID...                   per PID: utime+stime (clock ticks) summed over its process
                                    tree ('-' passes through), space-separated
  measure ...                       one measured wrk run -> one JSON line (see measure())
  report RESULTS_JSONL META_JSON    print the results table and write the markdown file

CPU accounting: /proc/PID/stat of a thread-group leader already sums all of its threads,
so a threaded proxy (sluice, haproxy with nbthread) is covered by its own line, and a
forking proxy (nginx master + workers) by summing the tree. Processes that exit during a
measurement would be missed; none of the peers fork or exit in steady state.
"""

import http.client
import json
import os
import re
import socket
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


# --- network ---------------------------------------------------------------------------

def freeport():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def pid_alive(pid):
    try:
        f = _stat_fields(pid)
    except OSError:
        return False
    return f[0] != "Z"


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


def _proc_stat_busy():
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
    tree, wrk itself (rusage from wait4) and the whole machine (/proc/stat) around it, and
    prints one JSON line. Whatever busy CPU is left after subtracting proxy, backend and
    wrk is 'foreign': another program competing for the machine during the run."""
    sep = argv.index("--")
    target, rnd, attempt, outfile, proxy_pid, backend_pid, timeout_s, load_cpus = argv[:sep]
    cmd = argv[sep + 1:]
    if load_cpus != "-":
        cmd = ["taskset", "-c", load_cpus] + cmd
    clk = os.sysconf("SC_CLK_TCK")
    pids = [int(backend_pid)] + ([int(proxy_pid)] if proxy_pid != "-" else [])

    def ticks():
        return [cputicks(p) for p in pids]

    t_before, s_before = ticks(), _proc_stat_busy()
    w0 = time.monotonic()
    with open(outfile, "wb") as out:
        child = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    timer = threading.Timer(float(timeout_s), child.kill)
    timer.start()
    _, status, ru = os.wait4(child.pid, 0)
    timer.cancel()
    child.returncode = os.waitstatus_to_exitcode(status)
    wall_s = time.monotonic() - w0
    t_after, s_after = ticks(), _proc_stat_busy()

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
    backend_s = (t_after[0] - t_before[0]) / clk
    rec["backend_cpu_us_per_req"] = backend_s * 1e6 / n
    proxy_s = 0.0
    if proxy_pid != "-":
        proxy_s = (t_after[1] - t_before[1]) / clk
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


# --- report ----------------------------------------------------------------------------

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
    vals = [r[key] for r in recs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


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


def report(results_path, meta_path):
    meta = read_meta(meta_path)
    recs = []
    if os.path.exists(results_path):
        with open(results_path) as f:
            recs = [json.loads(line) for line in f if line.strip()]

    summary = {}
    rows = []
    for t in meta["targets"]:
        name, label = t["name"], t["label"]
        # Per round, the attempt with the least other load counts (retries exist only
        # because another program disturbed a run).
        rounds = {}
        for r in recs:
            if r["target"] == name:
                rounds.setdefault(r["round"], []).append(r)
        mine = [min(att, key=lambda r: ("error" in r, r.get("foreign_cores", 0.0)))
                for att in rounds.values()]
        retried = sum(len(att) - 1 for att in rounds.values())
        rs = [r for r in mine if "error" not in r]
        bad = [r for r in mine if "error" in r]
        if not rs:
            why = t.get("failed") or (bad[0]["error"] if bad else "no runs")
            rows.append([label, f"FAILED: {why}"] + ["—"] * 10)
            continue
        if t.get("failed"):
            label += f" (⚠ {t['failed']})"
        rps = [r["rps"] for r in rs]
        med = statistics.median(rps)
        s = {
            "rps": med,
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
            "retried": retried,
            "runs": len(rs),
        }
        summary[name] = s
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
        ])
    header = ["target", "req/s (median)", "spread", "p50", "p99", "proxy CPU µs/req",
              "÷ backend's", "proxy core busy", "backend CPU µs/req", "other load (cores)", "sock err / non-2xx",
              "runs"]
    main_table = _table(header, rows)
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
        " attempt counts._")
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
    sl = summary.get("sluice")
    for peer in ("nginx", "haproxy"):
        p = summary.get(peer)
        plabel = next((t["label"] for t in meta["targets"] if t["name"] == peer), peer)
        if not sl or not p:
            ratio_rows.append([f"sluice / {plabel}", "n/a", "n/a", "n/a", "n/a"])
            continue

        def ratio(a, b, target, higher_is_better):
            if a is None or b is None or b == 0:
                return "n/a"
            r = a / b
            ok = r >= target if higher_is_better else r <= target
            return f"{r:.2f}× ({'meets' if ok else 'misses'} {'≥' if higher_is_better else '≤'}{target})"

        thr = ratio(sl["rps"], p["rps"], 1.3, True)
        if sl["busy"] is not None and sl["busy"] < 0.9:
            thr += " †"
            ceil = summary.get("backend", {}).get("rps")
            dagger = (f"† sluice's core was only {sl['busy'] * 100:.0f}% busy, so its throughput"
                      " is not its CPU limit and the throughput ratio understates it.")
            if ceil:
                ceilings.append(f"{ceil / p['rps']:.2f}× {plabel}")
                dagger += f" The load side's ceiling is {ceil:,.0f} req/s = " + ", ".join(ceilings) + "."
        ratio_rows.append([
            f"sluice / {plabel}",
            thr,
            ratio(sl["cpu_us"], p["cpu_us"], 0.6, False),
            ratio(sl["cpu_norm"], p["cpu_norm"], 0.6, False),
            ratio(sl["p99_us"], p["p99_us"], 1.0, False),
        ])
    ratio_table = _table(["ratio", "throughput (target ≥1.3×)", "CPU per request (target ≤0.6×)",
                          "same, ÷ backend's (cross-check)", "p99 latency (target ≤1.0×)"], ratio_rows)

    m = meta
    machine = "\n".join([
        f"- Date (UTC): {meta['date']}",
        f"- CPU: {m['cpu_model']}, nproc={m['nproc']}; kernel {m['kernel']}",
        f"- Pinning: {meta['pinning']}",
        f"- sluice: {m['sluice_version']} (commit {m['sluice_commit']}, zig {m['zig_version']},"
        f" ReleaseFast){', io=' + meta['sluice_io'] if meta.get('sluice_io') else ''}",
        f"- nginx: {m['nginx_version']}; HAProxy: {m['haproxy_version']}; wrk: {m['wrk_version']}",
        f"- Backend: nginx, 1 worker, `return 200 \"hello\\n\"` (6-byte body), keep-alive,"
        f" on 127.0.0.1:{meta['backend_port']}",
        f"- Load: `{meta['wrk_cmd']}` — {meta['runs']} measured run(s) per target after a"
        f" {meta['warmup_s']}s warm-up before each run; rounds interleave the targets",
        f"- CPU per request = (utime+stime of the proxy's whole process tree, from /proc, over"
        f" the run) / requests; CLK_TCK={meta['clk_tck']}",
    ])
    md = "\n\n".join(filter(None, [
        f"## Proxy benchmark ({meta['mode']})",
        main_table,
        legend,
        ratio_table,
        dagger,
        machine,
        "\n".join(f"- {n}" for n in notes) if notes else "",
    ])) + "\n"
    print(md)
    with open(meta["md_path"], "w") as f:
        f.write(md)
    with open(meta["md_path"][:-3] + ".json", "w") as f:
        json.dump({"meta": meta, "summary": summary, "runs": recs}, f, indent=1)
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
    if cmd == "tree":
        print("\n".join(str(p) for p in tree(int(args[0]))))
        return 0
    if cmd == "cputicks":
        print(" ".join(str(cputicks(int(a))) if a != "-" else "-" for a in args))
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
