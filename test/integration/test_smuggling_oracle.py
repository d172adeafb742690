"""The smuggling oracle (issue 9 §7): every exchange driven through sluice is checked
against an independent strict HTTP/1.1 parser (strict_http.py), so request smuggling and
response mis-framing cannot come back unnoticed.

For each generated case (smuggle_cases.py: adversarial heads, seeded):
  backends  the bytes each backend connection received parse, strictly, into exactly the
            requests the clients sent: same count (nothing smuggled, nothing duplicated,
            nothing left half-framed on an upstream connection), same method, target,
            version and Host, equal body bytes after de-chunking; sluice's framing is one
            Content-Length or chunked, never both, never absent when a body was sent; its
            Connection names none of the fields it forwards or owns; X-Forwarded-* are its
            own; spoofed Forwarded/X-Real-IP values and forbidden trailer fields do not
            reach the backend.
  clients   the bytes each client received parse, strictly, into exactly the responses its
            backends sent, in request order (status, 1xx statuses, body bytes), each framed
            (Content-Length, chunked, or close-delimited and then closed), with no
            Transfer-Encoding/Content-Length where RFC 9112 §6.1 / RFC 9110 §8.6 forbid
            them, nothing extra; a connection that stays open frames the next response
            exactly after the previous body (each open connection ends with a probe request
            that must get its own response), a connection sluice closes was closed for a
            reason (Connection: close either way, HTTP/1.0, a close-delimited body, a 4xx).
  refusals  a request sluice refuses gets exactly one 4xx, then the connection closes, and
            no byte of it (nor of anything behind it) reaches a backend.
  victims   after every case a new client sends one GET per backend carrying a cookie: if
            a smuggled prefix was left on a pooled upstream connection, the victim's request
            is captured by it and both sides see it.

Every case runs on both I/O backends (the `io` fixture). After a failing case sluice and
the backends are restarted, so one bug is reported once per case that hits it.

Environment:
  SMUGGLE_CASES=N   random cases per configuration (default: a CI-sized number per group)
  SMUGGLE_SEED=S    the generator's seed (default fixed; `random` picks one and prints it)
  SMUGGLE_ONLY=ID   run only the cases whose id contains ID (comma-separated), e.g.
                    `default#12:` or `issue1` (ids are printed with every failure)
  SMUGGLE_REPORT=P  append one JSON line per failing case to file P (group, io, case id,
                    failures), to compare the failing set of two binaries
The number of cases run is printed at the end of the session.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import socket
import time
import zlib
from collections import defaultdict
from dataclasses import dataclass, field

import pytest

from oracle_backend import OracleBackend, Received, Script
from smuggle_cases import (OWNED_REQUEST, TRAILER_FORBIDDEN, Builder, Case, ClientConn, Limits,
                           Req, RespSpec, case_rng, generate)
from strict_http import (HttpError, Message, parse_request, parse_response, split_requests,
                         split_responses)

# ---------------------------------------------------------------------------------------
# Configuration

_seed_env = os.environ.get("SMUGGLE_SEED", "").strip()
if _seed_env == "random":
    SEED = str(random.SystemRandom().randrange(1 << 32))
else:
    SEED = _seed_env or "9"
_cases_env = os.environ.get("SMUGGLE_CASES", "").strip()
ONLY = [s.strip() for s in os.environ.get("SMUGGLE_ONLY", "").split(",") if s.strip()]
REPORT = os.environ.get("SMUGGLE_REPORT", "").strip()

GROUPS = {
    # name: (limits as the generator sees them, sluice flags, default random cases)
    "default": (Limits(), [], 250),
    "sticky": (Limits(sticky=True), ["--strategy", "sticky"], 80),
    "manyfields": (Limits(headers_count_max=400), ["--headers-count-max", "400"], 40),
    "wide": (Limits(19456, 1024, 8 * 1024, sticky=True),
             ["--header-bytes-max", "19456", "--headers-count-max", "1024",
              "--strategy", "sticky"], 40),
    # Every request takes gzip (`_accepting_gzip`: one field more, so sluice's head limits are
    # one field and its bytes larger than the generator's) and every response that may be is
    # compressed: the client check gunzips it (`_content`).
    "compress": (Limits(),
                 ["--compress", "--compress-min", "0",
                  "--header-bytes-max", str(16 * 1024 + 23), "--headers-count-max", "101"], 60),
}
ACCEPT_GZIP = b"Accept-Encoding: gzip\r\n"
GUNZIPPED = [0]  # Responses the client check gunzipped, this session.
assert len(ACCEPT_GZIP) == 23


def random_cases(group: str) -> int:
    return int(_cases_env) if _cases_env else GROUPS[group][2]


TIME_LIMIT = 240.0 + 6.0 * max(random_cases(g) for g in GROUPS)
READ_TIMEOUT = 4.0  # for a response sluice owes
CLOSE_TIMEOUT = 2.0  # for a close sluice owes
QUIET_CLOSE_DELIMITED = 2.0  # a body without length: the close must follow this soon
BACKENDS = 2
PEER = "127.0.0.1"

# ---------------------------------------------------------------------------------------
# Session summary


class _Summary:
    def __init__(self):
        self.runs: list[tuple[str, str, int, int, float]] = []  # group, io, cases, failed, s

    def pytest_terminal_summary(self, terminalreporter):
        if not self.runs:
            return
        total = sum(r[2] for r in self.runs)
        failed = sum(r[3] for r in self.runs)
        tr = terminalreporter
        tr.write_sep("-", "smuggling oracle")
        for group, io, n, f, secs in self.runs:
            tr.write_line(f"  {group:<11} io={io:<6} {n:4d} cases, {f} failed, {secs:.1f}s")
        tr.write_line(f"smuggling oracle: {total} cases run ({failed} failed), seed {SEED}")


_summary = _Summary()


@pytest.fixture(scope="session")
def oracle_summary(request):
    pm = request.config.pluginmanager
    if not pm.is_registered(_summary):
        pm.register(_summary, "smuggling-oracle-summary")
    return _summary


# ---------------------------------------------------------------------------------------
# Driving one client connection


@dataclass
class ConnRun:
    spec: ClientConn
    label: str
    reqs: list[Req]  # the requests written (fully or partly), probe included
    written: int = 0  # bytes of the stream written
    rx: bytearray = field(default_factory=bytearray)
    eof: bool = False
    reset: bool = False
    send_error: str = ""
    timed_out: str = ""
    probe: Req | None = None
    stayed_open_after_close: bool = False
    sock: socket.socket | None = None
    pending: bytes = b""  # the rest of a side connection's stream

    def meta(self):
        return [(r.method, r.version) for r in self.reqs]

    def parsed(self):
        return split_responses(bytes(self.rx), self.meta(), self.eof, allow_no_reason_sp=False)


def _connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=READ_TIMEOUT)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def _send(run: ConnRun, data: bytes) -> bool:
    try:
        run.sock.settimeout(READ_TIMEOUT)
        run.sock.sendall(data)
        run.written += len(data)
        return True
    except (BrokenPipeError, ConnectionResetError) as e:
        run.send_error = f"{type(e).__name__} after {run.written} bytes"
    except socket.timeout:
        run.send_error = f"send blocked for {READ_TIMEOUT}s after {run.written} bytes"
    return False


def _recv(run: ConnRun, timeout: float) -> bool:
    """One receive; False on timeout. Sets eof/reset."""
    if run.eof:
        return False
    run.sock.settimeout(max(0.001, timeout))
    try:
        data = run.sock.recv(65536)
    except socket.timeout:
        return False
    except ConnectionResetError:
        run.reset = True
        run.eof = True
        return True
    except OSError:
        run.eof = True
        return True
    if not data:
        run.eof = True
    else:
        run.rx += data
    return True


def _awaits_close(run: ConnRun, stream) -> bool:
    """The bytes after the last complete response start a close-delimited response."""
    if not stream.partial or stream.error is not None:
        return False
    i = len(stream.messages)
    meta = run.meta()
    method, version = meta[i] if i < len(meta) else ("GET", "HTTP/1.1")
    try:
        msg = parse_response(bytes(run.rx), stream.end, method, True, version)
    except HttpError:
        return False
    return msg is not None and msg.framing == "close"


def _read_until(run: ConnRun, want: int, timeout: float = READ_TIMEOUT):
    """Receive until `want` final responses parse, or EOF, or a parse error, or time out."""
    end = time.monotonic() + timeout
    while True:
        stream = run.parsed()
        if len(stream.messages) >= want or run.eof or stream.error is not None:
            return stream
        left = end - time.monotonic()
        if _awaits_close(run, stream):
            left = min(left, QUIET_CLOSE_DELIMITED)
            if not _recv(run, left):
                run.timed_out = ("a response without Content-Length or chunked framing, and the "
                                 f"connection still open {QUIET_CLOSE_DELIMITED}s later")
                return run.parsed()
            end = time.monotonic() + timeout
            continue
        if left <= 0:
            run.timed_out = f"{want - len(stream.messages)} response(s) missing after {timeout}s"
            return stream
        _recv(run, left)


def _closing(req: Req, resp: Message | None) -> bool:
    """After this exchange sluice must close the connection: the request asked for it
    (`close`, or HTTP/1.0 without keep-alive), or the response says so or has no length."""
    if req.wants_close:
        return True
    if resp is None:
        return False
    return "close" in resp.connection_tokens() or resp.framing == "close"


def open_run(port: int, spec: ClientConn, label: str) -> ConnRun:
    run = ConnRun(spec, label, list(spec.reqs))
    run.sock = _connect(port)
    return run


def drive(run: ConnRun, probe: Req):
    """Write the connection's requests as its spec says, read the responses, then check
    the connection state with a probe (if it is still open) or wait for the close."""
    spec = run.spec
    stream_bytes = b"".join(r.wire for r in spec.reqs)
    if spec.mode == "pipeline":
        bounds = [0] + [c for c in spec.cuts if 0 < c < len(stream_bytes)] + [len(stream_bytes)]
        if run.pending:
            pieces = [run.pending]
        else:
            pieces = [stream_bytes[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]
        for i, p in enumerate(pieces):
            if i:
                time.sleep(spec.delay)
            if not _send(run, p):
                break
        stream = _read_until(run, len(spec.reqs))
    else:
        stream = None
        for i, r in enumerate(spec.reqs):
            if run.eof:
                break
            if r.wire_body and spec.cuts_lockstep:
                ok = _send(run, r.head)
                time.sleep(spec.delay)
                ok = ok and _send(run, r.wire_body)
            else:
                ok = _send(run, r.wire)
            if not ok:
                break
            stream = _read_until(run, i + 1)
            if len(stream.messages) < i + 1 or stream.error is not None:
                break
            if _closing(r, stream.messages[i]):
                break
        stream = run.parsed()
    finish(run, stream, probe)


def finish(run: ConnRun, stream, probe: Req):
    """With every response in and the connection open, send the probe; where sluice owes
    a close (the last exchange said so, or the stream broke), wait for it."""
    msgs = stream.messages
    n = len(msgs)
    last_closing = bool(n) and _closing(run.reqs[n - 1], msgs[-1])
    if not run.eof and not run.timed_out:
        if stream.error is None and n == len(run.reqs) and not stream.partial \
                and not last_closing:
            run.reqs.append(probe)
            run.probe = probe
            if _send(run, probe.wire):
                _read_until(run, n + 1)
        elif last_closing or (n and msgs[-1].status >= 400):
            _wait_closed(run)
    try:
        run.sock.close()
    except OSError:
        pass


def _wait_closed(run: ConnRun):
    end = time.monotonic() + CLOSE_TIMEOUT
    while not run.eof:
        left = end - time.monotonic()
        if left <= 0:
            run.stayed_open_after_close = True
            return
        _recv(run, left)


# ---------------------------------------------------------------------------------------
# The harness: sluice + backends, restarted after a failing case


class Harness:
    def __init__(self, make_sluice, group: str, args: list[str], retired: list):
        self.make_sluice = make_sluice
        # conftest attaches every sluice it made to a failure report; a restarted one's
        # stderr is already in the failures it caused, so it leaves that list.
        self.retired = retired
        self.group = group
        self.args = args
        self.scripts: dict[str, Script] = {}
        self.backends: list[OracleBackend] = []
        self.sluice = None

    def start(self):
        self.stop()
        self.scripts = {}
        self.backends = [OracleBackend(self.scripts, f"b{i}") for i in range(BACKENDS)]
        self.sluice = self.make_sluice()
        self.sluice.start(self.backends, args=self.args)

    def stop(self):
        if self.sluice is not None:
            self.sluice.kill()
            self.retired.append(self.sluice)
        for b in self.backends:
            b.stop(timeout=1.0)

    def script(self, req: Req):
        spec = req.response
        self.scripts[req.rid] = Script(spec.render, closes=spec.closes)


def run_case(h: Harness, case: Case) -> list[str]:
    """Drive one case and judge it. Returns the failures (empty: the case passed)."""
    probes = Builder(case_rng(case.seed, case.group, f"probe:{case.key}"), f"{case.tag}p",
                     Limits())
    for r in case.requests():
        h.script(r)
    marks = [b.mark() for b in h.backends]
    runs: list[ConnRun] = []
    failures: list[str] = []
    try:
        side = [c for c in case.conns if c.hold_until_after]
        main = [c for c in case.conns if not c.hold_until_after]
        side_runs = []
        for i, c in enumerate(side):
            run = open_run(h.sluice.port, c, f"side client {i}")
            stream = b"".join(r.wire for r in c.reqs)
            cut = c.cuts[0] if c.cuts else len(stream) // 2
            _send(run, stream[:cut])
            run.pending = stream[cut:]
            side_runs.append(run)
        time.sleep(0.02 if side else 0)
        for i, c in enumerate(main):
            run = open_run(h.sluice.port, c, f"client {i}")
            runs.append(run)
            probe = probes.sentinel()
            h.script(probe)
            drive(run, probe)
        for run in side_runs:
            runs.append(run)
            probe = probes.sentinel()
            h.script(probe)
            drive(run, probe)
        # Victims: a new client, one request per backend, each with a cookie.
        victims = [probes.sentinel() for _ in range(BACKENDS)]
        for v in victims:
            h.script(v)
        vrun = open_run(h.sluice.port, ClientConn(victims, "lockstep"), "victim client")
        runs.append(vrun)
        probe = probes.sentinel()
        h.script(probe)
        drive(vrun, probe)
    except OSError as e:
        gone = "" if h.sluice.running() else " (sluice is gone)"
        failures.append(f"[client-socket] client socket error: {type(e).__name__}: {e}{gone}")
    for b in h.backends:
        b.settle(0.05)
    failures += judge(case, runs, h.backends, marks)
    lost = any(f.startswith(("[client-response-lost]", "[client-no-response]",
                             "[client-socket]")) for f in failures)
    if lost:
        h.sluice.wait(0.5)  # a crash takes a moment to print its trace and exit
    if not h.sluice.running():
        failures.append(f"[crash] sluice exited (rc={h.sluice.proc.poll()}): "
                        + _panic_excerpt(h.sluice.lines))
    return failures


def _panic_excerpt(lines: list[str]) -> str:
    for i, line in enumerate(lines):
        if "panic" in line or "unreachable" in line or "Segmentation" in line:
            return " | ".join(ln.strip() for ln in lines[i:i + 6])
    return " | ".join(ln.strip() for ln in lines[-6:])


# ---------------------------------------------------------------------------------------
# The oracle


def _excerpt(b: bytes, n: int = 300) -> str:
    return repr(b[:n]) + ("..." if len(b) > n else "")


def judge(case: Case, runs: list[ConnRun], backends: list[OracleBackend], marks) -> list[str]:
    F: list[str] = []
    known: dict[str, Req] = {}
    for run in runs:
        for r in run.reqs:
            known[r.rid] = r
    for r in case.requests():
        known.setdefault(r.rid, r)
    forwarded: dict[str, list[Received]] = defaultdict(list)
    touched: set[str] = set()  # requests whose bytes reached a backend but did not frame
    for b, mark in zip(backends, marks):
        received, conns = b.since(mark)
        with b.lock:
            exceptions = list(b.exceptions)
        F += [f"[oracle-bug] oracle backend exception: {e}" for e in exceptions]
        for item in received:
            req = known.get(item.rid) if item.rid else None
            if req is None:
                F.append(f"[smuggled-request] backend {item.backend} conn {item.conn} received "
                         f"a request no client sent: {item.msg.describe()}; its head: "
                         f"{_excerpt(item.msg.head(), 400)}")
                continue
            forwarded[item.rid].append(item)
        # Upstream connection streams.
        for c in conns:
            partial = c.partial()
            owner = _partial_owner(partial) if partial else None
            if owner:
                touched.add(owner)
            if c.error is not None:
                F.append(f"[upstream-unparseable] backend {c.backend} conn {c.index}: the bytes "
                         f"sluice sent do not parse strictly: {c.error.reason}; bytes from the "
                         f"last message boundary: {_excerpt(partial, 400)}")
            elif partial:
                owner_req = known.get(owner) if owner else None
                aborted = c.closed and owner_req is not None and owner_req.expect != "accept"
                if not aborted:
                    state = "closed" if c.closed else "left open (pooled?)"
                    F.append(f"[upstream-partial] backend {c.backend} conn {c.index} {state} "
                             f"with {len(partial)} bytes that are not a complete request: "
                             f"{_excerpt(partial, 300)}")
    for rid, items in forwarded.items():
        if len(items) > 1:
            where = ", ".join(f"{i.backend}/conn{i.conn}" for i in items)
            F.append(f"[duplicate] request {rid} reached a backend {len(items)} times ({where})")
        F += check_forwarded(known[rid], items[0].msg)
    for run in runs:
        F += judge_client(run, forwarded, touched)
    return F


def _partial_owner(partial: bytes) -> str | None:
    from oracle_backend import rid_of
    line = partial.split(b"\r\n", 1)[0].decode("latin-1")
    return rid_of(line)


def check_forwarded(req: Req, msg: Message) -> list[str]:
    """What one backend received for `req`, against what the client sent."""
    F = []
    p = f"FORWARDED {req.rid}:"
    if msg.method != req.method:
        F.append(f"[forwarded-request-line] {p} method {msg.method!r}, the client sent "
                 f"{req.method!r}")
    if msg.target != req.path:
        F.append(f"[forwarded-request-line] {p} target {msg.target[:120]!r}, expected "
                 f"{req.path[:120]!r}")
    if msg.version != req.version:
        F.append(f"[forwarded-request-line] {p} version {msg.version}, the client sent "
                 f"{req.version}")
    if msg.body != req.body:
        F.append(f"[forwarded-body] {p} body differs: the backend framed {len(msg.body)} bytes "
                 f"({msg.framing}: {_excerpt(msg.body, 80)}), the client sent {len(req.body)} "
                 f"({req.framing}: {_excerpt(req.body, 80)})")
    cl = msg.get_all("content-length")
    if req.body or req.framing == "chunked":
        if msg.framing not in ("length", "chunked"):
            F.append(f"[forwarded-framing] {p} the client sent a body ({req.framing}) but the "
                     f"forwarded head has neither Content-Length nor Transfer-Encoding: "
                     f"{_excerpt(msg.head(), 500)}")
    if msg.framing == "length" and cl and int(cl[0]) != len(req.body):
        F.append(f"[forwarded-framing] {p} forwarded Content-Length {cl[0]} for a "
                 f"{len(req.body)}-byte body")
    hosts = msg.get_all("host")
    if len(hosts) != 1 or hosts[0].lower() != req.host.lower():
        F.append(f"[forwarded-host] {p} Host fields {hosts!r}, expected exactly [{req.host!r}]")
    names = set(msg.names())
    tokens = msg.connection_tokens()
    for t in tokens:
        allowed_upgrade = t == "upgrade" and msg.has("upgrade")
        if allowed_upgrade:
            continue
        if t in OWNED_REQUEST:
            F.append(f"[forwarded-connection] {p} the forwarded Connection names {t!r}, a field "
                     f"sluice owns: {msg.get_all('connection')!r}")
        elif t in names:
            F.append(f"[forwarded-connection] {p} the forwarded Connection names {t!r}, which "
                     f"is forwarded too (the backend would drop it)")
    xff = msg.get_all("x-forwarded-for")
    if xff != [PEER]:
        F.append(f"[forwarded-x-forwarded] {p} X-Forwarded-For {xff!r}, expected exactly "
                 f"[{PEER!r}] (untrusted client)")
    xfp = msg.get_all("x-forwarded-proto")
    if xfp != ["http"]:
        F.append(f"[forwarded-x-forwarded] {p} X-Forwarded-Proto {xfp!r}, expected ['http']")
    xfh = msg.get_all("x-forwarded-host")
    if [v.lower() for v in xfh] != [req.host.lower()]:
        F.append(f"[forwarded-x-forwarded] {p} X-Forwarded-Host {xfh!r}, expected [{req.host!r}]")
    for spoof in req.spoofs:
        for name in ("x-forwarded-for", "x-forwarded-host", "forwarded", "x-real-ip"):
            for v in msg.get_all(name):
                if spoof in v:
                    F.append(f"[forwarded-spoof] {p} the client's spoofed {spoof!r} reached the "
                             f"backend in {name}: {v!r}")
    for t in msg.trailers:
        if t.lname in TRAILER_FORBIDDEN:
            F.append(f"[forwarded-trailer] {p} forwarded trailer field {t.raw[:120]!r} (RFC "
                     f"9110 §6.5.1: framing, routing, forwarding and authentication fields do "
                     f"not go in trailers)")
    if msg.has("upgrade"):
        protos = [v.strip().lower() for v in ",".join(msg.get_all("upgrade")).split(",")]
        if not req.upgrade:
            F.append(f"[forwarded-upgrade] {p} forwarded Upgrade {msg.get_all('upgrade')!r} the "
                     f"client never sent")
        if "h2c" in protos:
            F.append(f"[forwarded-upgrade] {p} forwarded an h2c upgrade")
        if "upgrade" not in tokens:
            F.append(f"[forwarded-upgrade] {p} forwarded Upgrade without `Connection: upgrade`")
    return F


def judge_client(run: ConnRun, forwarded: dict[str, list[Received]], touched: set[str]
                 ) -> list[str]:
    """What one client received, against what its backends sent."""
    F = []
    p = f"CLIENT {run.label}:"
    stream = run.parsed()
    msgs = stream.messages
    if stream.error is not None:
        hint = ""
        if msgs and len(msgs) <= len(run.reqs) and run.reqs[len(msgs) - 1].method == "HEAD":
            cl = msgs[-1].get("content-length")
            if cl and cl.isdigit() and int(cl) == len(run.rx) - stream.end:
                hint = (f" (they are exactly the {cl} bytes of content the response "
                        f"{msgs[-1].status} to a HEAD request announced and carried: RFC 9110 "
                        f"§9.3.2, a response to HEAD has no content)")
        F.append(f"[client-unparseable] {p} bytes after response {len(msgs) - 1} are not a "
                 f"valid response: {stream.error.reason}: "
                 f"{_excerpt(bytes(run.rx[stream.end:]), 300)}{hint}")
    for i, m in enumerate(msgs):
        for v in m.violations + [v for im in m.interim for v in im.violations]:
            F.append(f"[client-sender-rule] {p} response {i} ({m.status}): {v}")
        names = set(m.names())
        for t in m.connection_tokens():
            if t in ("content-length", "transfer-encoding") or (t in names and t != "upgrade"):
                F.append(f"[client-connection-names-framing] {p} response {i} Connection names "
                         f"{t!r}, a field it carries or one that frames it: "
                         f"{m.get_all('connection')!r}")
    closed_reason = None
    for i, req in enumerate(run.reqs):
        fwd = forwarded.get(req.rid)
        resp = msgs[i] if i < len(msgs) else None
        if closed_reason is not None:
            if fwd:
                F.append(f"[client-after-close] {p} request {req.rid} was forwarded after the "
                         f"connection was to close ({closed_reason})")
            if resp is not None:
                F.append(f"[client-after-close] {p} response {i} ({resp.status}) after the "
                         f"connection was to close ({closed_reason})")
            continue
        if resp is None:
            if fwd:
                F.append(f"[client-response-lost] {p} request {req.rid} reached a backend but "
                         f"no response to it reached the client ({_why_missing(run)})")
            else:
                F.append(f"[client-no-response] {p} no response to request {req.rid} "
                         f"({req.describe()}): {_why_missing(run)}")
            closed_reason = "no response"
            continue
        interim = [im.status for im in resp.interim]
        if fwd:
            spec: RespSpec = req.response
            want_body = spec.expected_body(req.method)
            want_interim = [s for s, _ in spec.interim] if req.version == "HTTP/1.1" else []
            body = _content(resp, spec, F, p)
            ok = resp.status == spec.status and body == want_body
            if ok and interim != want_interim:
                F.append(f"[client-interim] {p} response to {req.rid}: 1xx statuses {interim}, "
                         f"the backend sent {want_interim}")
            if not ok:
                if spec.may_502 and resp.status == 502:
                    pass  # a head over sluice's response limits, refused whole
                elif resp.status == spec.status and body.startswith(want_body):
                    F.append(f"[client-response-unframed] {p} response {i} to {req.rid} "
                             f"({resp.framing}) runs {len(body) - len(want_body)} bytes "
                             f"past the backend's "
                             f"{len(want_body)}-byte body: it lost its length and swallowed "
                             f"what followed: {_excerpt(body[len(want_body):], 200)}")
                else:
                    F.append(f"[client-wrong-response] {p} response {i} to {req.rid} is "
                             f"{resp.status} with body {_excerpt(resp.body, 160)}; the backend "
                             f"sent {spec.status} with body {_excerpt(want_body, 160)}"
                             f"{_whose(resp, run)}")
        else:
            if 400 <= resp.status < 500:
                if req.expect == "accept":
                    F.append(f"[client-valid-refused] {p} valid request {req.rid} refused with "
                             f"{resp.status} ({req.describe()})")
                elif req.expect == "reject" and req.reject_statuses and \
                        resp.status not in req.reject_statuses:
                    F.append(f"[client-refusal-status] {p} request {req.rid} refused with "
                             f"{resp.status}, expected one of {req.reject_statuses}")
            elif req.rid in touched:
                F.append(f"[client-after-unframeable] {p} response {i} ({resp.status}) to "
                         f"request {req.rid}, whose bytes reached a backend that could not "
                         f"frame them (see upstream-unparseable)")
            else:
                F.append(f"[client-response-without-request] {p} response {i} ({resp.status}, "
                         f"body {_excerpt(resp.body, 120)}) to request {req.rid}, which never "
                         f"reached a backend{_whose(resp, run)}")
        partly_streamed = req.rid in touched and req.reject_in == "body"
        if req.expect == "reject" and (fwd or (req.rid in touched and not partly_streamed)):
            F.append(f"[refusal-expected] {p} request {req.rid} should have been refused "
                     f"({req.reject_statuses}) but was forwarded ({req.describe()})")
        # Connection state after this response.
        must_close = req.wants_close or "close" in resp.connection_tokens() or \
            resp.framing == "close" or (not fwd and resp.status >= 400)
        if must_close:
            closed_reason = (f"after response {i} ({resp.status}, "
                             f"Connection={resp.get_all('connection')}, framing={resp.framing}, "
                             f"request wants close={req.wants_close})")
            if run.stayed_open_after_close and i == len(msgs) - 1:
                F.append(f"[client-stayed-open] {p} the connection stayed open {closed_reason} for "
                         f"{CLOSE_TIMEOUT}s")
    if stream.error is None and stream.partial:
        what = "after the connection closed" if run.eof else "on a connection still open"
        F.append(f"[client-extra-bytes] {p} {len(stream.partial)} bytes after the last complete "
                 f"response {what}: {_excerpt(stream.partial, 300)}")
    if run.timed_out and not any("no response" in f or "no response to it" in f for f in F):
        F.append(f"[client-timeout] {p} {run.timed_out}")
    return F


def _why_missing(run: ConnRun) -> str:
    if run.timed_out:
        return run.timed_out
    if run.reset:
        return "connection reset"
    if run.eof:
        return "connection closed"
    if run.send_error:
        return f"send failed: {run.send_error}"
    return "?"


def _content(resp: Message, spec: RespSpec, F: list[str], p: str) -> bytes:
    """The body as the backend sent it: gunzipped when sluice compressed it (the `compress`
    group), else as received."""
    if resp.get_all("content-encoding") != ["gzip"]:
        return resp.body
    if any(f.lower().startswith(b"content-encoding:") for f in spec.fields):
        return resp.body  # The backend's own coding, passed as it is.
    try:
        plain = gzip.decompress(resp.body)
        GUNZIPPED[0] += 1
        return plain
    except (OSError, EOFError, zlib.error) as e:
        F.append(f"[client-gzip] {p} response to {spec.rid} does not gunzip: {e}")
        return resp.body


def _accepting_gzip(cases: list[Case]) -> None:
    """Each request of the `compress` group says it takes gzip: a field right after its
    request line (after any empty lines before it), nowhere else."""
    for case in cases:
        for conn in case.conns:
            for r in conn.reqs:
                start = 0
                while r.head.startswith(b"\r\n", start):
                    start += 2
                nl = r.head.find(b"\n", start)
                if nl > start and r.head[nl - 1:nl] == b"\r":
                    r.head = r.head[:nl + 1] + ACCEPT_GZIP + r.head[nl + 1:]


def _whose(resp: Message, run: ConnRun) -> str:
    """Name the request a mis-delivered response belongs to, when its body says."""
    body = resp.body
    if body.startswith(b"UNSCRIPTED"):
        return f" (the response to a SMUGGLED request: {body[:120]!r})"
    if body.startswith(b"response to ") or body.startswith(b"body of "):
        other = body.split(b" ")[2].split(b"\n")[0].decode("latin-1", "replace")
        return f" (the response meant for request {other})"
    return ""


# ---------------------------------------------------------------------------------------
# The tests


def _selected(cases: list[Case]) -> list[Case]:
    if not ONLY:
        return cases
    return [c for c in cases if any(o in c.id for o in ONLY)]


@pytest.mark.time_limit(TIME_LIMIT)
@pytest.mark.parametrize("group", list(GROUPS))
def test_smuggling_oracle(group, make_sluice, io, oracle_summary, request):
    """Every generated case of this configuration passes the oracle (see the module
    docstring). Failures list every failing case with its id, seed and what went wrong."""
    limits, args, _ = GROUPS[group]
    cases = _selected(generate(SEED, group, limits, random_cases(group)))
    if group == "compress":
        _accepting_gzip(cases)
    if not cases:
        pytest.skip(f"SMUGGLE_ONLY={ONLY} selects no {group} case")
    retired: list = []
    h = Harness(make_sluice, group, args, retired)
    t0 = time.monotonic()
    gunzipped_before = GUNZIPPED[0]
    h.start()
    failed: list[tuple[Case, list[str]]] = []
    try:
        for case in cases:
            failures = run_case(h, case)
            h.scripts.clear()
            for b in h.backends:
                b.forget()
            made = getattr(request.node, "_sluices", [])
            made[:] = [s for s in made if all(s is not r for r in retired)]
            retired.clear()
            if failures:
                failed.append((case, failures))
                if REPORT:
                    with open(REPORT, "a") as out:
                        out.write(json.dumps({"group": group, "io": io, "case": case.id,
                                              "seed": SEED, "failures": failures}) + "\n")
                h.start()  # a clean sluice and clean backends for the next case
    finally:
        h.stop()
        oracle_summary.runs.append((group, io, len(cases), len(failed),
                                    time.monotonic() - t0))
    if failed:
        kinds: dict[str, int] = defaultdict(int)
        for _, failures in failed:
            for k in {f[1:f.index("]")] for f in failures if f.startswith("[")}:
                kinds[k] += 1
        report = [f"{len(failed)} of {len(cases)} {group} cases failed on io={io} "
                  f"(SMUGGLE_SEED={SEED}; rerun one with SMUGGLE_ONLY=<id>)",
                  "failing cases per kind of failure: " + ", ".join(
                      f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])),
                  "failing cases: " + " ".join(c.id for c, _ in failed)]
        for case, failures in failed:
            report.append("")
            report.append(f"=== {case.id} ===")
            report += [f"  - {f}" for f in failures[:12]]
            if len(failures) > 12:
                report.append(f"  ... {len(failures) - 12} more")
            report.append(case.describe())
        pytest.fail("\n".join(report), pytrace=False)
    if group == "compress" and not ONLY:
        # The group means nothing unless sluice compressed responses the oracle then read.
        assert GUNZIPPED[0] - gunzipped_before >= len(cases) // 4, GUNZIPPED[0] - gunzipped_before


# ---------------------------------------------------------------------------------------
# The strict parser itself (no sluice involved)


def test_strict_parser_frames_and_refuses():
    ok = (b"POST /o/x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
          b"5;a=\"b;c\"\r\nhello\r\n0\r\nX-T: 1\r\n\r\n"
          b"GET /o/y HTTP/1.1\r\nHost: h\r\nContent-Length:3\r\n\r\nabc")
    s = split_requests(ok)
    assert s.clean and [m.target for m in s.messages] == ["/o/x", "/o/y"]
    assert s.messages[0].body == b"hello" and s.messages[1].body == b"abc"
    assert [t.lname for t in s.messages[0].trailers] == ["x-t"]
    for bad in [
        b"GET / HTTP/1.1\r\nHost: h\nX: y\r\n\r\n",  # bare LF
        b"GET / HTTP/1.1\r\nHost: h\r\nX : y\r\n\r\n",  # space before colon
        b"GET / HTTP/1.1\r\nHost: h\r\nX: y\r\n z\r\n\r\n",  # obs-fold
        b"GET / HTTP/1.1\r\nHost: h\r\nHost: h\r\n\r\n",  # two Hosts
        b"GET / HTTP/1.1\r\nX: y\r\n\r\n",  # no Host
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nab",
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9223372036854775808\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX",
        b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;=\r\nhello\r\n",
        b"GET /a b HTTP/1.1\r\nHost: h\r\n\r\n",
        b"\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n",
    ]:
        with pytest.raises(HttpError):
            parse_request(bad, 0, eof=True)
    assert parse_request(b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhel") is None
    # Responses: framing by method and status, close-delimited only at EOF.
    r = parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", 0, "HEAD")
    assert r.framing == "none" and r.body == b""
    r = parse_response(b"HTTP/1.1 103 Early Hints\r\nLink: <a>\r\n\r\n"
                       b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                       b"3\r\nabc\r\n0\r\n\r\n")
    assert [m.status for m in r.interim] == [103] and r.body == b"abc"
    assert parse_response(b"HTTP/1.1 200 OK\r\n\r\nhello", 0, "GET") is None
    r = parse_response(b"HTTP/1.1 200 OK\r\n\r\nhello", 0, "GET", eof=True)
    assert r.framing == "close" and r.body == b"hello"
    r = parse_response(b"HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n")
    assert r.violations and r.framing == "none"
    with pytest.raises(HttpError):
        parse_response(b"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n")
    assert parse_response(b"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
                          allow_no_reason_sp=True).status == 200
    with pytest.raises(HttpError):
        parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello")


_DIGEST = """
import hashlib, sys
sys.path.insert(0, sys.argv[1])
from smuggle_cases import generate, Limits
h = hashlib.sha256()
for c in generate("1", "default", Limits(), 40):
    for r in c.requests():
        h.update(r.wire + r.response.render(r.method))
print(h.hexdigest())
"""


def test_generator_is_deterministic_and_well_formed():
    """The same seed gives the same cases, in any process (no set or hash order leaks into
    them); every generated request the generator calls valid parses strictly into what it
    says it is (the oracle's own inputs are sound)."""
    import subprocess
    import sys
    from pathlib import Path
    here = str(Path(__file__).resolve().parent)
    digests = {subprocess.run([sys.executable, "-c", _DIGEST, here], capture_output=True,
                              text=True, check=True, env={**os.environ, "PYTHONHASHSEED": hs}
                              ).stdout for hs in ("1", "2")}
    assert len(digests) == 1, digests
    for group, (limits, _, n) in GROUPS.items():
        a = generate("1", group, limits, 20)
        b = generate("1", group, limits, 20)
        assert [r.wire for c in a for r in c.requests()] == \
            [r.wire for c in b for r in c.requests()]
        for case in a:
            for r in case.requests():
                if r.expect != "accept":
                    continue
                msg = parse_request(r.wire, 0, eof=True)
                assert msg is not None and msg.end == len(r.wire), (case.id, r.rid)
                assert msg.body == r.body and msg.method == r.method, (case.id, r.rid)
                if r.version == "HTTP/1.1":
                    resp = r.response
                    parsed = parse_response(resp.render(r.method), 0, r.method, eof=True,
                                            allow_no_reason_sp=True)
                    assert parsed.status == resp.status, (case.id, r.rid)
                    assert parsed.body == resp.expected_body(r.method), (case.id, r.rid)
