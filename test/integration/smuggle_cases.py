"""Adversarial exchanges for the smuggling oracle (test_smuggling_oracle.py), generated
from a seed.

A Case is a few client connections, each a list of requests written in a chosen way
(pipelined in one stream cut at chosen offsets, or one request at a time), and for every
request the exact response its backend will send. Every request carries its own id in its
target (`/o/<rid>`), so the oracle can tell which request a backend received and which
response a client got.

Each case is built from its own `random.Random(f"{seed}:{group}:{key}")` (key: the fixed
case's name, or the random case's number), so one case can be rebuilt alone from (seed,
group, key), and adding a case changes no other. Failure reports name the seed and the id
(`default:issue1_connection_content_length`, `sticky#17:responses`).

What the requests vary (sluice's owned fields are Content-Length, Transfer-Encoding, Host,
Upgrade, X-Forwarded-For/-Proto/-Host, Forwarded and X-Real-IP):
  - `Connection` fields naming owned fields and hop-by-hop ones, in every casing
    (lower, UPPER, Title, mIxEd), with and without the space after the colon, with extra
    OWS, empty list elements, and repeated Connection fields;
  - framing fields spelled `Content-Length:5`, `content-length:   005`, tabs, `Chunked`;
  - bodies: none, Content-Length, chunked with extensions (token and quoted values) and
    trailers, bodies that look like requests (complete or cut, so a lost length turns
    them into smuggled requests), bodies larger than sluice's buffer;
  - pipelined requests behind bodies, streams cut inside heads, at the head/body boundary
    and inside chunk lines;
  - heads at and around the limits: header bytes, field count, target bytes;
  - HTTP/1.0 requests, absolute-form targets, spoofed forwarding fields.
What the responses vary: `Connection: Content-Length` / `Transfer-Encoding` / `close,
content-length`, fields without a space after the colon (many of them), Transfer-Encoding
on 1xx and 204, status lines without a reason (with and without the SP), 1xx interim
responses, chunked bodies with extensions and trailers, close-delimited bodies, heads
near the response limits.

Expectations: `accept` (a valid request within every limit: it must reach a backend and
its response must reach the client), `reject` (over a limit, or invalid: the client gets
one 4xx from `reject_statuses` and no byte of it reaches a backend), `any` (a request a
strict proxy may refuse, e.g. one whose Connection names Content-Length: either outcome,
each fully checked).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

SPOOF_IP = "6.6.6.6"
SPOOF_HOST = "spoofed.invalid"

# Fields sluice owns in a request: never removed because Connection names them (issue 9).
OWNED_REQUEST = ["content-length", "transfer-encoding", "host", "upgrade", "x-forwarded-for",
                 "x-forwarded-proto", "x-forwarded-host", "forwarded", "x-real-ip"]
OTHER_TOKENS = ["close", "keep-alive", "te", "trailer", "x-custom", "x-hop"]
# Fields that must not travel in a trailer section (RFC 9110 §6.5.1: framing, routing,
# authentication, forwarding).
TRAILER_FORBIDDEN = ["content-length", "transfer-encoding", "host", "x-forwarded-for",
                     "x-forwarded-proto", "x-forwarded-host", "forwarded", "x-real-ip",
                     "authorization", "cookie", "connection", "te", "trailer", "upgrade"]
METHODS_BODYLESS = ["GET", "HEAD", "DELETE", "OPTIONS"]
METHODS_BODY = ["POST", "PUT", "PATCH", "PURGE"]
REASONS = {100: "Continue", 103: "Early Hints", 200: "OK", 201: "Created", 202: "Accepted",
           204: "No Content", 304: "Not Modified", 404: "Not Found", 409: "Conflict",
           500: "Internal Server Error", 503: "Service Unavailable"}


@dataclass
class Limits:
    header_bytes_max: int = 16 * 1024
    headers_count_max: int = 100
    target_bytes_max: int = 8 * 1024
    sticky: bool = False


@dataclass
class RespSpec:
    """One scripted backend response."""
    rid: str
    status: int = 200
    status_line: str = "normal"  # normal | empty_reason | no_sp
    fields: list[bytes] = field(default_factory=list)  # field lines, framing included
    body: bytes = b""  # content (before chunking)
    framing: str = "length"  # length | chunked | close | none
    chunk_sizes: list[int] = field(default_factory=list)
    chunk_exts: list[bytes] = field(default_factory=list)
    trailers: list[bytes] = field(default_factory=list)
    interim: list[tuple[int, list[bytes]]] = field(default_factory=list)
    closes: bool = False  # the backend closes after it
    may_502: bool = False  # sluice may refuse it (over a response limit) with a 502
    notes: list[str] = field(default_factory=list)

    def status_text(self, status: int) -> bytes:
        reason = REASONS.get(status, "Whatever")
        if self.status_line == "empty_reason" and status == self.status:
            return f"HTTP/1.1 {status} ".encode()
        if self.status_line == "no_sp" and status == self.status:
            return f"HTTP/1.1 {status}".encode()
        return f"HTTP/1.1 {status} {reason}".encode()

    def head(self) -> bytes:
        return self.status_text(self.status) + b"\r\n" + b"".join(
            f + b"\r\n" for f in self.fields) + b"\r\n"

    def render(self, method: str) -> bytes:
        out = bytearray()
        for status, fields in self.interim:
            out += self.status_text(status) + b"\r\n" + b"".join(f + b"\r\n" for f in fields)
            out += b"\r\n"
        out += self.head()
        if method == "HEAD" or self.framing == "none":
            return bytes(out)
        if self.framing == "chunked":
            out += encode_chunked(self.body, self.chunk_sizes, self.chunk_exts, self.trailers)
        else:
            out += self.body
        return bytes(out)

    def expected_body(self, method: str) -> bytes:
        if method == "HEAD" or self.framing == "none":
            return b""
        return self.body


@dataclass
class Req:
    rid: str
    method: str
    target: str  # as sent
    path: str  # the origin-form target the backend must receive
    version: str
    host: str  # the Host the backend must receive
    head: bytes
    wire_body: bytes  # the body as sent (chunk-encoded when chunked)
    body: bytes  # the content the backend must receive
    framing: str  # none | length | chunked
    response: RespSpec
    expect: str = "accept"  # accept | reject | any
    reject_statuses: tuple = ()
    spoofs: list[str] = field(default_factory=list)  # values that must not reach a backend
    trailer_names: list[str] = field(default_factory=list)
    conn_tokens: list[str] = field(default_factory=list)  # Connection tokens sent
    upgrade: bool = False
    notes: list[str] = field(default_factory=list)
    # Where the refusal is found: "head" (nothing may reach a backend) or "body" (a chunked body
    # is streamed: its head may already be upstream when a bad chunk line arrives, but never
    # a complete message).
    reject_in: str = "head"

    @property
    def wire(self) -> bytes:
        return self.head + self.wire_body

    @property
    def wants_close(self) -> bool:
        if "close" in self.conn_tokens:
            return True
        return self.version == "HTTP/1.0" and "keep-alive" not in self.conn_tokens

    def describe(self) -> str:
        notes = f" [{', '.join(self.notes)}]" if self.notes else ""
        return (f"{self.method} {self.target[:80]} {self.version} framing={self.framing} "
                f"body={len(self.body)}B expect={self.expect}{notes}")


@dataclass
class ClientConn:
    reqs: list[Req]
    mode: str = "pipeline"  # pipeline: one stream cut at `cuts`; lockstep: one at a time
    cuts: list[int] = field(default_factory=list)  # offsets into the stream (pipeline)
    delay: float = 0.002  # between writes
    hold_until_after: bool = False  # a side connection: half sent before the others run
    cuts_lockstep: bool = False  # lockstep: write each head and its body separately
    label: str = ""


@dataclass
class Case:
    group: str
    index: int
    seed: str
    kind: str
    conns: list[ClientConn]
    key: str = ""  # f:NAME (fixed), s:NAME (limit sweep), r:N (random)
    tag: str = ""  # the prefix of its request ids
    title: str = ""

    @property
    def id(self) -> str:
        if self.key.startswith("r:"):
            return f"{self.group}#{self.index}:{self.kind}"
        return f"{self.group}:{self.kind}"

    def requests(self) -> list[Req]:
        return [r for c in self.conns for r in c.reqs]

    def describe(self) -> str:
        lines = [f"case {self.id} (seed {self.seed}) {self.title}"]
        for i, c in enumerate(self.conns):
            side = " side" if c.hold_until_after else ""
            lines.append(f"  client conn {i} ({c.mode}{side}, cuts={c.cuts[:12]}):")
            for r in c.reqs:
                lines.append(f"    {r.rid}: {r.describe()}")
                lines.append(f"      head: {r.head[:600]!r}{'...' if len(r.head) > 600 else ''}")
                if r.wire_body:
                    lines.append(f"      body on the wire: {r.wire_body[:200]!r}"
                                 f"{'...' if len(r.wire_body) > 200 else ''}")
                resp = r.response
                lines.append(f"      response: {resp.status} framing={resp.framing} "
                             f"body={len(resp.body)}B may_502={resp.may_502} "
                             f"notes={resp.notes} head={resp.head()[:300]!r}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# Spelling


def casing(rng: random.Random, name: str) -> str:
    style = rng.randrange(5)
    if style == 0:
        return name.lower()
    if style == 1:
        return name.upper()
    if style == 2:
        return "-".join(p[:1].upper() + p[1:] for p in name.lower().split("-"))
    if style == 3:
        return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in name)
    return name  # as given


def field_line(rng: random.Random, name: str, value: str, style: str | None = None) -> bytes:
    """`name` `:` OWS `value` OWS in one of the valid spellings."""
    style = style or rng.choice(["std", "std", "nospace", "wide", "tab", "trail"])
    if style == "nospace":
        line = f"{name}:{value}"
    elif style == "wide":
        line = f"{name}:   {value}"
    elif style == "tab":
        line = f"{name}:\t{value}\t"
    elif style == "trail":
        line = f"{name}: {value}  "
    else:
        line = f"{name}: {value}"
    return line.encode("latin-1")


def list_value(rng: random.Random, tokens: list[str]) -> str:
    """A comma list in one of the valid spellings (OWS around commas, empty elements)."""
    seps = [", ", ",", " , ", ",  ", " ,", ", , "]
    out = ""
    for i, t in enumerate(tokens):
        if i:
            out += rng.choice(seps)
        out += t
    if rng.random() < 0.15:
        out = ", " + out
    if rng.random() < 0.15:
        out = out + " ,"
    return out


def hexsize(rng: random.Random, n: int) -> str:
    s = f"{n:x}"
    if rng.random() < 0.3:
        s = s.upper()
    if rng.random() < 0.15:
        s = "0" * rng.randint(1, 3) + s
    return s


def encode_chunked(body: bytes, sizes: list[int], exts: list[bytes], trailers: list[bytes],
                   size_spelling=None) -> bytes:
    out = bytearray()
    pos = 0
    for i, n in enumerate(sizes):
        ext = exts[i] if i < len(exts) else b""
        sz = size_spelling[i] if size_spelling and i < len(size_spelling) else f"{n:x}"
        out += sz.encode() + ext + b"\r\n" + body[pos:pos + n] + b"\r\n"
        pos += n
    assert pos == len(body), (pos, len(body))
    last_ext = exts[len(sizes)] if len(exts) > len(sizes) else b""
    last = size_spelling[len(sizes)] if size_spelling and len(size_spelling) > len(sizes) else "0"
    out += last.encode() + last_ext + b"\r\n"
    for t in trailers:
        out += t + b"\r\n"
    out += b"\r\n"
    return bytes(out)


def split_sizes(rng: random.Random, n: int) -> list[int]:
    if n == 0:
        return []
    k = rng.randint(1, min(5, n))
    cuts = sorted(rng.sample(range(1, n), k - 1)) if k > 1 else []
    bounds = [0] + cuts + [n]
    return [b - a for a, b in zip(bounds, bounds[1:])]


CHUNK_EXTS_VALID = [b";a=b", b";name", b";q=\"x;y\"", b";q=\"a\\\"b\"", b";a=1;b=2", b";x-y_z=t"]
CHUNK_EXTS_BWS = [b" ;a=b", b"; a = b", b";a =\"v\"", b"\t;a"]


# ---------------------------------------------------------------------------------------
# Bodies


def smuggle_payload(rng: random.Random, rid: str) -> bytes:
    """Bytes that become a request of their own (or the start of one that captures the next
    client's request) if a backend ever reads them as a message boundary."""
    kind = rng.randrange(5)
    if kind == 0:  # complete smuggled request
        return f"GET /o/{rid}-smuggled HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    if kind == 1:  # cut: captures whatever comes next on that upstream connection
        return f"GET /o/{rid}-smuggled HTTP/1.1\r\nHost: x\r\nX-Captured: ".encode()
    if kind == 2:  # a chunked terminator, then a request
        return f"0\r\n\r\nGET /o/{rid}-smuggled HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    if kind == 3:  # a body that says it has a body
        inner = b"smuggled-body"
        return (f"POST /o/{rid}-smuggled HTTP/1.1\r\nHost: x\r\nContent-Length: "
                f"{len(inner)}\r\n\r\n").encode() + inner
    return bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))


def random_body(rng: random.Random, rid: str, large_ok: bool = True) -> bytes:
    r = rng.random()
    if r < 0.35:
        body = smuggle_payload(rng, rid)
    elif r < 0.45:
        body = b""
    elif r < 0.9:
        body = bytes(rng.randrange(256) for _ in range(rng.randint(1, 600)))
    elif large_ok:
        n = rng.choice([20 * 1024, 40 * 1024, 70 * 1024])  # beyond one 20 KiB buffer
        block = (f"{rid}:".encode() + bytes(range(256))) * (n // 200 + 1)
        body = block[:n]
    else:
        body = b"x" * rng.randint(1, 3000)
    if rng.random() < 0.3 and body:
        body = body + f"GET /o/{rid}-tail HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    return body


# ---------------------------------------------------------------------------------------
# Responses


def plain_response(rid: str, status: int = 200, body: bytes | None = None) -> RespSpec:
    body = f"response to {rid}\n".encode() if body is None else body
    fields = [b"Content-Type: text/plain", f"Content-Length: {len(body)}".encode()]
    return RespSpec(rid, status, "normal", fields, body, "length")


def response_for(rng: random.Random, rid: str, method: str, version: str, limits: Limits,
                 adversarial: float = 0.5, allow_close: bool = True) -> RespSpec:
    """A response for request `rid`: plain, or with the adversarial features the issue
    lists (with probability `adversarial`)."""
    if rng.random() >= adversarial:
        return plain_response(rid, rng.choice([200, 200, 201, 404, 500]))
    spec = RespSpec(rid)
    notes = spec.notes
    status = rng.choice([200, 200, 200, 201, 204, 304, 404, 500])
    if status == 304 and method not in ("GET", "HEAD"):
        status = 200
    spec.status = status
    spec.status_line = rng.choice(["normal"] * 4 + ["empty_reason", "no_sp"])
    if spec.status_line != "normal":
        notes.append(f"status line {spec.status_line}")
    no_body = status in (204, 304)
    body = (f"response to {rid} ".encode() + bytes(rng.randrange(32, 127)
                                                   for _ in range(rng.randint(0, 300))))
    fields: list[bytes] = []
    # Framing.
    framings = ["length", "length", "chunked"]
    if allow_close and version == "HTTP/1.1":
        framings.append("close")
    if version == "HTTP/1.0":
        # chunked to an HTTP/1.0 request breaks RFC 9112 §6.1; sluice must de-chunk it
        framings = ["length", "length", "close", "chunked"] if allow_close else ["length"]
    framing = "none" if no_body else rng.choice(framings)
    if framing == "length":
        name = casing(rng, "Content-Length")
        value = str(len(body))
        if rng.random() < 0.2:
            value = "0" * rng.randint(1, 3) + value
            notes.append("Content-Length with leading zeros")
        fields.append(field_line(rng, name, value))
    elif framing == "chunked":
        fields.append(field_line(rng, casing(rng, "Transfer-Encoding"),
                                 rng.choice(["chunked", "Chunked", "CHUNKED"])))
        spec.chunk_sizes = split_sizes(rng, len(body))
        if rng.random() < 0.4:
            spec.chunk_exts = [rng.choice(CHUNK_EXTS_VALID + [b""])
                               for _ in range(len(spec.chunk_sizes) + 1)]
            notes.append("chunk extensions")
        if rng.random() < 0.3:
            spec.trailers = [b"X-Checksum: abc", b"Server-Timing:db;dur=53"]
            notes.append("trailers")
    elif framing == "close":
        spec.closes = True
        notes.append("close-delimited")
    elif framing == "none" and rng.random() < 0.5:
        # Transfer-Encoding on a 204/304: RFC 9112 §6.1 forbids it on 204.
        fields.append(field_line(rng, "Transfer-Encoding", "chunked"))
        notes.append(f"Transfer-Encoding on {status}")
    spec.framing = framing
    spec.body = b"" if no_body else body
    # Connection naming framing fields, and hop-by-hop fields to drop.
    conn_tokens = []
    r = rng.random()
    if r < 0.45:
        conn_tokens.append(casing(rng, rng.choice(["Content-Length", "Transfer-Encoding"])))
    if rng.random() < 0.3:
        conn_tokens.append(casing(rng, "keep-alive"))
    if rng.random() < 0.2:
        conn_tokens.append("X-Hop")
        fields.append(b"X-Hop: 1")
    if rng.random() < 0.15:
        conn_tokens.append("close")
        spec.closes = True
    if conn_tokens:
        rng.shuffle(conn_tokens)
        count = rng.choice([1, 1, 2]) if len(conn_tokens) > 1 else 1
        if count == 1:
            fields.append(field_line(rng, casing(rng, "Connection"), list_value(rng, conn_tokens)))
        else:
            for t in conn_tokens:
                fields.append(field_line(rng, casing(rng, "Connection"), t))
        notes.append(f"Connection: {conn_tokens}")
    # Fields without a space after the colon, and more fields.
    n_nospace = rng.choice([0, 0, 1, 3, 10, 30])
    for i in range(n_nospace):
        fields.append(f"X-N{i}:v{i}".encode())
    if n_nospace:
        notes.append(f"{n_nospace} Name:value fields")
    if rng.random() < 0.3:
        fields.append(b"Set-Cookie: a=1; Path=/")
        fields.append(b"Set-Cookie:b=2")
    if rng.random() < 0.2:
        fields.append(field_line(rng, "Keep-Alive", "timeout=5"))
    if rng.random() < 0.25:
        hint = [b"Link:</style.css>; rel=preload", b"X-Early:1"]
        if rng.random() < 0.3:
            hint.append(b"Transfer-Encoding: chunked")
            notes.append("Transfer-Encoding on 103")
        spec.interim.append((103, hint))
        notes.append("103 interim")
    rng.shuffle(fields)
    spec.fields = fields
    return spec


def many_fields_response(rng: random.Random, rid: str, n_fields: int, head_target: int | None,
                         limits: Limits, nospace: bool = True, body_len: int = 60,
                         set_cookies: bool = False) -> RespSpec:
    """A response with `n_fields` fields (framing included), written `Name:value` (the
    rewrite adds a byte to each), padded to `head_target` bytes of head if given."""
    body = (f"body of {rid} ".encode() + b"B" * body_len)[:max(body_len, 1)]
    cl = f"Content-Length: {len(body)}".encode()
    fields = [cl]
    for i in range(n_fields - 1):
        if set_cookies:
            fields.append(f"Set-Cookie: c{i}=v{i}; Path=/".encode())
        elif nospace:
            fields.append(f"A{i}:v".encode())
        else:
            fields.append(f"A{i}: v".encode())
    spec = RespSpec(rid, 200, "normal", fields, body, "length")
    if head_target is not None:
        spec.fields[-1] = pad_field(spec.fields[-1], head_target - len(spec.head()))
    head_len = len(spec.head())
    growth = (n_fields if nospace else 0) + (70 if limits.sticky else 0) + 24
    spec.may_502 = not response_must_pass(head_len, n_fields, growth)
    spec.notes.append(f"{n_fields} fields ({'Name:value' if nospace else 'Name: value'}), "
                      f"head {head_len} B")
    return spec


def pad_field(line: bytes, extra: int) -> bytes:
    assert extra >= 0, extra
    return line + b"p" * extra


def response_must_pass(head_len: int, n_fields: int, growth: int) -> bool:
    """What any real app may send must pass unchanged: heads up to 8 KiB and 50 fields,
    whose rewrite grows them little. Bigger heads may be refused with a 502 (sluice's
    response limits are its choice), never corrupted."""
    return head_len <= 8 * 1024 and n_fields <= 50 and growth <= 120


# ---------------------------------------------------------------------------------------
# Requests


@dataclass
class ReqOptions:
    method: str | None = None
    version: str | None = None
    body_kind: str | None = None  # none | length | chunked
    body: bytes | None = None
    conn_owned: float = 0.5  # probability of a Connection naming owned fields
    conn_tokens: list[str] | None = None  # exact tokens (spelled with random casing)
    spoof: float = 0.15
    absolute: float = 0.05
    upgrade: float = 0.05
    head_len: int | None = None  # pad the head to exactly this many bytes
    field_count: int | None = None  # make the head have exactly this many fields
    target_len: int | None = None  # make the target exactly this long
    chunk_bws: float = 0.1
    trailers_owned: float = 0.1
    response_adversarial: float = 0.3
    allow_close_response: bool = True
    http10: float = 0.08
    close_token: float = 0.08


class Builder:
    """Builds requests and their scripted responses for one case."""

    def __init__(self, rng: random.Random, case_tag: str, limits: Limits):
        self.rng = rng
        self.tag = case_tag
        self.limits = limits
        self.n = 0

    def rid(self) -> str:
        self.n += 1
        return f"{self.tag}-{self.n}"

    def request(self, o: ReqOptions | None = None) -> Req:
        o = o or ReqOptions()
        rng = self.rng
        rid = self.rid()
        notes: list[str] = []
        expect = "accept"
        reject: set[int] = set()
        version = o.version or ("HTTP/1.0" if rng.random() < o.http10 else "HTTP/1.1")
        body_kind = o.body_kind
        if body_kind is None:
            body_kind = rng.choice(["none", "length", "length", "chunked"])
        if o.method:
            method = o.method
        elif body_kind == "none":
            method = rng.choice(METHODS_BODYLESS + METHODS_BODY[:1])
        else:
            method = rng.choice(METHODS_BODY + ["GET"])
        if body_kind == "chunked" and version == "HTTP/1.0":
            expect, reject = "reject", {400}
            notes.append("chunked in HTTP/1.0")
        body = o.body if o.body is not None else (
            random_body(rng, rid) if body_kind != "none" else b"")
        # Target.
        path = f"/o/{rid}"
        if rng.random() < 0.3:
            path += rng.choice(["/a/b", "/x.html", "/%7Euser", "/a;p=1"])
        if rng.random() < 0.3:
            path += rng.choice(["?q=1", "?a=1&b=%20x", "?", "?x=/o/zz"])
        host = rng.choice(["sluice.test", "sluice.test", "sluice.test:8080", "127.0.0.1"])
        target = path
        if o.target_len is not None:
            pad = o.target_len - len(path) - len("?pad=")
            assert pad >= 0
            path = target = path + "?pad=" + "t" * pad
            notes.append(f"target {len(target)} B")
            if len(target) > self.limits.target_bytes_max:
                expect, reject = "reject", {414, 431}
        elif rng.random() < o.absolute:
            target = f"http://{host}{path}"
            notes.append("absolute-form")
        fields: list[bytes] = []
        host_line = field_line(rng, casing(rng, "Host"), host)
        # Framing field.
        framing = "none"
        wire_body = b""
        trailer_names: list[str] = []
        if body_kind == "length":
            framing = "length"
            value = str(len(body))
            if rng.random() < 0.15:
                value = "0" * rng.randint(1, 2) + value
                notes.append("CL leading zeros")
            fields.append(field_line(rng, casing(rng, "Content-Length"), value))
            wire_body = body
        elif body_kind == "chunked":
            framing = "chunked"
            fields.append(field_line(rng, casing(rng, "Transfer-Encoding"),
                                     rng.choice(["chunked", "chunked", "Chunked", "CHUNKED"])))
            sizes = split_sizes(rng, len(body))
            exts: list[bytes] = []
            if rng.random() < 0.4:
                exts = [rng.choice(CHUNK_EXTS_VALID + [b""]) for _ in range(len(sizes) + 1)]
                notes.append("chunk-ext")
            if rng.random() < o.chunk_bws:
                i = rng.randrange(len(sizes) + 1)
                exts += [b""] * (len(sizes) + 1 - len(exts))
                exts[i] = rng.choice(CHUNK_EXTS_BWS)
                notes.append("chunk-ext with BWS")
                expect = "any" if expect == "accept" else expect
            trailers: list[bytes] = []
            if rng.random() < 0.3:
                trailers.append(field_line(rng, "X-Trailer", "t1"))
                trailer_names.append("x-trailer")
                notes.append("trailer")
            if rng.random() < o.trailers_owned:
                name = rng.choice(["X-Forwarded-For", "Content-Length", "Host", "Forwarded",
                                   "X-Real-IP", "Transfer-Encoding"])
                value = {"Content-Length": "5", "Host": SPOOF_HOST,
                         "Transfer-Encoding": "chunked", "Forwarded": f"for={SPOOF_IP}"
                         }.get(name, SPOOF_IP)
                trailers.append(field_line(rng, casing(rng, name), value))
                trailer_names.append(name.lower())
                notes.append(f"{name} in trailer")
                expect = "any" if expect == "accept" else expect
            spelling = [hexsize(rng, n) for n in sizes] + [rng.choice(["0", "0", "000"])]
            wire_body = encode_chunked(body, sizes, exts, trailers, spelling)
        elif rng.random() < 0.1 and method in METHODS_BODY:
            fields.append(field_line(rng, casing(rng, "Content-Length"), "0"))
            framing = "length"
        # Connection fields.
        tokens: list[str] = []
        spoofs: list[str] = []
        if o.conn_tokens is not None:
            tokens = list(o.conn_tokens)
        else:
            if rng.random() < o.conn_owned:
                tokens += rng.sample(OWNED_REQUEST, rng.choice([1, 1, 1, 2, 3]))
            if rng.random() < 0.3:
                tokens += rng.sample(OTHER_TOKENS[1:], rng.choice([1, 2]))
            if rng.random() < o.close_token:
                tokens.append("close")
        rng.shuffle(tokens)
        spelled = [casing(rng, t) for t in tokens]
        if tokens:
            if any(t in OWNED_REQUEST for t in tokens):
                expect = "any" if expect == "accept" else expect
            notes.append(f"Connection: {spelled}")
            groups = [spelled]
            if len(spelled) > 1 and rng.random() < 0.4:
                k = rng.randrange(1, len(spelled))
                groups = [spelled[:k], spelled[k:]]
                notes.append("repeated Connection")
            for g in groups:
                fields.append(field_line(rng, casing(rng, "Connection"), list_value(rng, g)))
        # Fields the owned tokens name, so that dropping them would matter.
        upgrade = False
        for t in dict.fromkeys(tokens):
            if t == "x-forwarded-for":
                fields.append(field_line(rng, casing(rng, "X-Forwarded-For"), SPOOF_IP))
                spoofs.append(SPOOF_IP)
            elif t == "x-forwarded-proto":
                fields.append(field_line(rng, casing(rng, "X-Forwarded-Proto"), "https"))
            elif t == "x-forwarded-host":
                fields.append(field_line(rng, casing(rng, "X-Forwarded-Host"), SPOOF_HOST))
                spoofs.append(SPOOF_HOST)
            elif t == "forwarded":
                fields.append(field_line(rng, casing(rng, "Forwarded"),
                                         f"for={SPOOF_IP};host={SPOOF_HOST}"))
                spoofs.append(SPOOF_IP)
            elif t == "x-real-ip":
                fields.append(field_line(rng, casing(rng, "X-Real-IP"), SPOOF_IP))
                spoofs.append(SPOOF_IP)
            elif t == "upgrade" and method == "GET" and body_kind == "none" \
                    and rng.random() < 0.5:
                proto = rng.choice(["websocket", "h2c", "foo/1"])
                fields.append(field_line(rng, casing(rng, "Upgrade"), proto))
                upgrade = True
                notes.append(f"Upgrade: {proto}")
            elif t == "te":
                fields.append(field_line(rng, "TE", "trailers"))
            elif t in ("x-custom", "x-hop"):
                fields.append(field_line(rng, t.title(), "hop"))
            elif t == "keep-alive":
                fields.append(field_line(rng, "Keep-Alive", "timeout=5"))
        # Spoofed forwarding fields, named in no Connection.
        if rng.random() < o.spoof:
            name = rng.choice(["X-Forwarded-For", "Forwarded", "X-Real-IP", "X-Forwarded-Host"])
            value = {"Forwarded": f"for={SPOOF_IP}", "X-Forwarded-Host": SPOOF_HOST
                     }.get(name, SPOOF_IP)
            fields.append(field_line(rng, casing(rng, name), value))
            spoofs.append(SPOOF_HOST if name == "X-Forwarded-Host" else SPOOF_IP)
            notes.append(f"spoofed {name}")
        # Benign fields.
        for _ in range(rng.choice([0, 1, 2, 4])):
            fields.append(rng.choice([
                b"Accept: */*", b"User-Agent: oracle/1.0", b"X-A:b", b"x-empty:",
                b"Cookie: sid=abc", b"Accept-Encoding:\tgzip, br", b"X-Long: " + b"L" * 200,
            ]))
        if rng.random() < 0.05:
            fields.append(b"X-Obs-Text: caf\xe9")
            notes.append("obs-text")
            expect = "any" if expect == "accept" else expect
        rng.shuffle(fields)
        fields.insert(rng.randrange(len(fields) + 1), host_line)
        request_line = f"{method} {target} {version}".encode()
        # Field count.
        if o.field_count is not None:
            n = o.field_count - len(fields)
            assert n >= 0, (o.field_count, len(fields))
            fields += [f"X-F{i}:{i}".encode() for i in range(n)]
            notes.append(f"{o.field_count} fields")
            if o.field_count > self.limits.headers_count_max:
                expect, reject = "reject", {431}
        head = request_line + b"\r\n" + b"".join(f + b"\r\n" for f in fields) + b"\r\n"
        if o.head_len is not None:
            extra = o.head_len - len(head)
            pad = b"X-Pad: "
            assert extra >= len(pad) + 3, (o.head_len, len(head))
            fields.append(pad + b"v" * (extra - len(pad) - 2))
            head = request_line + b"\r\n" + b"".join(f + b"\r\n" for f in fields) + b"\r\n"
            assert len(head) == o.head_len, (len(head), o.head_len)
            notes.append(f"head {len(head)} B")
            if len(head) > self.limits.header_bytes_max:
                expect, reject = "reject", {431}
        elif len(head) > self.limits.header_bytes_max:
            expect, reject = "reject", {431}
        if len(fields) > self.limits.headers_count_max and o.field_count is None:
            expect, reject = "reject", {431}
        if version == "HTTP/1.0" and not any(t == "keep-alive" for t in tokens):
            notes.append("HTTP/1.0")
        resp = response_for(rng, rid, method, version, self.limits, o.response_adversarial,
                            o.allow_close_response)
        return Req(rid, method, target, path, version, host, head, wire_body, body, framing,
                   resp, expect, tuple(sorted(reject)) if reject else (), spoofs,
                   trailer_names, tokens, upgrade, notes)

    def sentinel(self) -> Req:
        """A plain GET that checks a connection still frames correctly after a case."""
        rid = self.rid()
        path = f"/o/{rid}"
        head = f"GET {path} HTTP/1.1\r\nHost: sluice.test\r\nCookie: victim=secret-{rid}\r\n\r\n"
        return Req(rid, "GET", path, path, "HTTP/1.1", "sluice.test", head.encode(), b"", b"",
                   "none", plain_response(rid), notes=["victim"])


def stream_cuts(rng: random.Random, reqs: list[Req]) -> list[int]:
    """Offsets where the pipelined stream is cut into writes: random ones plus the
    interesting ones (head/body boundary, inside the final CRLFCRLF, inside a chunk line)."""
    total = sum(len(r.wire) for r in reqs)
    cuts: set[int] = set()
    pos = 0
    for r in reqs:
        head_end = pos + len(r.head)
        if rng.random() < 0.5:
            cuts.add(head_end)
        if rng.random() < 0.2:
            cuts.add(head_end - rng.randint(1, 3))
        if r.wire_body and rng.random() < 0.3:
            cuts.add(head_end + rng.randint(1, len(r.wire_body)))
        if rng.random() < 0.2:
            cuts.add(pos + rng.randint(1, len(r.head)))
        pos += len(r.wire)
    for _ in range(rng.choice([0, 0, 1, 2])):
        if total > 1:
            cuts.add(rng.randint(1, total - 1))
    return sorted(c for c in cuts if 0 < c < total)


def connection(rng: random.Random, reqs: list[Req], mode: str | None = None) -> ClientConn:
    mode = mode or rng.choice(["pipeline", "pipeline", "lockstep"])
    cuts = stream_cuts(rng, reqs) if mode == "pipeline" else []
    return ClientConn(reqs, mode, cuts, cuts_lockstep=rng.random() < 0.5)


# ---------------------------------------------------------------------------------------
# Case kinds


def case_rng(seed: str, group: str, key: str) -> random.Random:
    return random.Random(f"{seed}:{group}:{key}")


def gen_mixed(b: Builder) -> list[ClientConn]:
    """A few connections of a few requests, every feature at random."""
    rng = b.rng
    conns = []
    for _ in range(rng.choice([1, 1, 2])):
        reqs = [b.request(ReqOptions(response_adversarial=0.4))
                for _ in range(rng.choice([1, 2, 3, 4]))]
        conns.append(connection(rng, reqs))
    return conns


def gen_conn_tokens(b: Builder) -> list[ClientConn]:
    """A request with a body whose Connection names owned fields, a pipelined request
    behind it; the first request's body looks like a request."""
    rng = b.rng
    tokens = rng.sample(OWNED_REQUEST, rng.choice([1, 1, 2, 3]))
    if rng.random() < 0.6 and "content-length" not in tokens:
        tokens[0] = "content-length"
    if rng.random() < 0.2:
        tokens.append(rng.choice(["close", "keep-alive", "x-custom"]))
    kind = rng.choice(["length", "length", "chunked"])
    first = b.request(ReqOptions(method=rng.choice(["POST", "PUT", "GET"]), version="HTTP/1.1",
                                 body_kind=kind, conn_tokens=tokens, response_adversarial=0.0,
                                 body=smuggle_payload(rng, b.tag + "x")))
    reqs = [first]
    if "close" not in tokens:
        reqs.append(b.request(ReqOptions(version="HTTP/1.1", conn_owned=0.3,
                                         response_adversarial=0.2, close_token=0.0)))
    return [connection(rng, reqs, rng.choice(["pipeline", "pipeline", "lockstep"]))]


def gen_chunked(b: Builder) -> list[ClientConn]:
    rng = b.rng
    reqs = [b.request(ReqOptions(version="HTTP/1.1", body_kind="chunked", conn_owned=0.3,
                                 chunk_bws=0.2, trailers_owned=0.25, http10=0.0,
                                 response_adversarial=0.3))
            for _ in range(rng.choice([1, 2, 3]))]
    return [connection(rng, reqs, "pipeline")]


def gen_responses(b: Builder) -> list[ClientConn]:
    """Plain requests, adversarial responses, pipelined so a mis-framed response swallows
    the next one."""
    rng = b.rng
    reqs = []
    for _ in range(rng.choice([2, 3])):
        reqs.append(b.request(ReqOptions(conn_owned=0.0, spoof=0.0, absolute=0.0, upgrade=0.0,
                                         chunk_bws=0.0, trailers_owned=0.0, http10=0.05,
                                         close_token=0.0, response_adversarial=1.0,
                                         body_kind=rng.choice(["none", "none", "length"]))))
    return [connection(rng, reqs, rng.choice(["pipeline", "lockstep"]))]


def gen_head_limit(b: Builder, delta: int) -> list[ClientConn]:
    """A head of exactly header_bytes_max + delta bytes, a pipelined request behind."""
    rng = b.rng
    L = b.limits.header_bytes_max
    first = b.request(ReqOptions(head_len=L + delta, version="HTTP/1.1",
                                 conn_owned=0.5, response_adversarial=0.2,
                                 body_kind=rng.choice(["none", "length", "chunked"]),
                                 close_token=0.0, http10=0.0))
    reqs = [first, b.request(ReqOptions(conn_owned=0.3, version="HTTP/1.1", close_token=0.0))]
    return [connection(rng, reqs, "pipeline")]


def gen_count_limit(b: Builder, delta: int) -> list[ClientConn]:
    rng = b.rng
    N = b.limits.headers_count_max
    first = b.request(ReqOptions(field_count=N + delta, version="HTTP/1.1", conn_owned=0.5,
                                 body_kind=rng.choice(["none", "length"]), close_token=0.0,
                                 http10=0.0, spoof=0.0, response_adversarial=0.2))
    reqs = [first, b.request(ReqOptions(conn_owned=0.3, version="HTTP/1.1", close_token=0.0))]
    return [connection(rng, reqs, rng.choice(["pipeline", "lockstep"]))]


def gen_target_limit(b: Builder, delta: int) -> list[ClientConn]:
    rng = b.rng
    T = b.limits.target_bytes_max
    first = b.request(ReqOptions(target_len=T + delta, version="HTTP/1.1", conn_owned=0.3,
                                 body_kind=rng.choice(["none", "length"]), absolute=0.0,
                                 close_token=0.0, http10=0.0))
    reqs = [first, b.request(ReqOptions(conn_owned=0.3, version="HTTP/1.1", close_token=0.0))]
    return [connection(rng, reqs, "pipeline")]


def gen_response_limit(b: Builder, n_fields: int, head_target: int | None,
                       nospace: bool = True, set_cookies: bool = False,
                       side: bool = False) -> list[ClientConn]:
    """A GET whose response has many fields (and a head near the limit), then a pipelined
    request; with `side`, two other clients hold half-received requests in their buffers
    while the big response is rewritten, and finish them afterwards."""
    rng = b.rng
    first = b.request(ReqOptions(method="GET", version="HTTP/1.1", body_kind="none",
                                 conn_owned=0.0, spoof=0.0, absolute=0.0, close_token=0.0,
                                 http10=0.0))
    first.response = many_fields_response(rng, first.rid, n_fields, head_target, b.limits,
                                          nospace, set_cookies=set_cookies)
    second = b.request(ReqOptions(version="HTTP/1.1", conn_owned=0.0, close_token=0.0,
                                  http10=0.0, response_adversarial=0.0))
    conns = []
    if side:
        for _ in range(2):
            r = b.request(ReqOptions(method="POST", version="HTTP/1.1", body_kind="length",
                                     conn_owned=0.0, close_token=0.0, http10=0.0,
                                     response_adversarial=0.0,
                                     body=b"side-body-" + bytes(range(48, 122)) * 4))
            half = len(r.head) // 2
            conns.append(ClientConn([r], "pipeline", [half], hold_until_after=True,
                                    label="half-sent"))
    conns.append(ClientConn([first, second], "pipeline", []))
    return conns


CONNECTION_SPELLINGS = [
    ("lower", [b"Connection: content-length"], "length"),
    ("no_space", [b"Connection:Content-Length"], "length"),
    ("list_with_close", [b"Connection: close,  CONTENT-LENGTH ,x"], "length"),
    ("repeated", [b"Connection: keep-alive", b"Connection: Content-Length"], "length"),
    ("tabs_upper", [b"CONNECTION:\tcontent-LENGTH\t"], "length"),
    ("transfer_encoding", [b"Connection: Transfer-Encoding"], "chunked"),
    ("every_owned_field", [b"Connection: Host, X-Forwarded-For, X-Forwarded-Proto, "
                           b"X-Forwarded-Host, Forwarded, X-Real-IP, Upgrade, Content-Length, "
                           b"Transfer-Encoding"], "chunked"),
]


def exact_connection_case(b: Builder, conn_lines: list[bytes], kind: str) -> ClientConn:
    """A POST whose Connection is spelled exactly `conn_lines`, whose body is a request,
    with a GET pipelined behind it (unless the POST asked for close)."""
    rng = b.rng
    rid = b.rid()
    body = f"GET /o/{rid}-smuggled HTTP/1.1\r\nHost: x\r\nX-Captured: ".encode()
    fields = [b"Host: sluice.test"] + conn_lines
    tokens = [t.strip(" \t").lower() for ln in conn_lines
              for t in ln.split(b":", 1)[1].decode().split(",") if t.strip(" \t")]
    spoofs = []
    if "x-forwarded-for" in tokens:
        fields += [f"X-Forwarded-For: {SPOOF_IP}".encode(), b"X-Forwarded-Proto: https",
                   f"X-Forwarded-Host: {SPOOF_HOST}".encode(),
                   f"Forwarded: for={SPOOF_IP}".encode(), f"X-Real-IP: {SPOOF_IP}".encode()]
        spoofs = [SPOOF_IP, SPOOF_HOST]
    if kind == "chunked":
        fields.append(b"Transfer-Encoding: chunked")
        sizes = split_sizes(rng, len(body))
        wire = encode_chunked(body, sizes, [], [])
    else:
        fields.append(f"Content-Length: {len(body)}".encode())
        wire = body
    head = f"POST /o/{rid} HTTP/1.1\r\n".encode() + b"".join(f + b"\r\n" for f in fields) \
        + b"\r\n"
    first = Req(rid, "POST", f"/o/{rid}", f"/o/{rid}", "HTTP/1.1", "sluice.test", head, wire,
                body, kind, plain_response(rid), "any", (), spoofs, [], tokens, False,
                [f"exact {conn_lines!r}"])
    reqs = [first]
    if "close" not in tokens:
        reqs.append(b.request(ReqOptions(method="GET", version="HTTP/1.1", body_kind="none",
                                         conn_owned=0.0, spoof=0.0, close_token=0.0,
                                         http10=0.0, response_adversarial=0.0)))
    return ClientConn(reqs, "pipeline", [len(head)])


def fixed_issue_cases(b: Builder, group: str) -> list[tuple[str, list[ClientConn]]]:
    """The issue's own reproductions, with ids in the targets."""
    out = []
    rng = b.rng
    if group in ("default", "sticky"):
        # §1: Connection: Content-Length with a request in the body.
        rid = b.rid()
        body = f"GET /o/{rid}-attacker HTTP/1.1\r\nHost: x\r\nX-Captured: ".encode()
        head = (f"POST /o/{rid} HTTP/1.1\r\nHost: example.com\r\nConnection: Content-Length\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        req = Req(rid, "POST", f"/o/{rid}", f"/o/{rid}", "HTTP/1.1", "example.com", head, body,
                  body, "length", plain_response(rid), "any", (), [], [],
                  ["content-length"], False, ["issue §1: Connection: Content-Length"])
        out.append(("issue1_connection_content_length", [ClientConn([req], "pipeline")]))
        # §2: the same on a response, with a pipelined request behind.
        first = b.request(ReqOptions(method="GET", version="HTTP/1.1", body_kind="none",
                                     conn_owned=0.0, spoof=0.0, close_token=0.0, http10=0.0,
                                     absolute=0.0))
        first.response = RespSpec(first.rid, 200, "normal",
                                  [b"Connection: Content-Length", b"Content-Length: 5"],
                                  b"hello", "length", notes=["issue §2"])
        second = b.request(ReqOptions(method="GET", version="HTTP/1.1", body_kind="none",
                                      conn_owned=0.0, spoof=0.0, close_token=0.0, http10=0.0,
                                      response_adversarial=0.0))
        out.append(("issue2_response_connection_content_length",
                    [ClientConn([first, second], "pipeline")]))
        # §5: Transfer-Encoding on 204 and on a 103.
        r204 = b.request(ReqOptions(method="GET", version="HTTP/1.1", body_kind="none",
                                    conn_owned=0.0, spoof=0.0, close_token=0.0, http10=0.0,
                                    absolute=0.0))
        r204.response = RespSpec(r204.rid, 204, "normal", [b"Transfer-Encoding: chunked"],
                                 b"", "none", notes=["issue §5: TE on 204"])
        r103 = b.request(ReqOptions(method="GET", version="HTTP/1.1", body_kind="none",
                                    conn_owned=0.0, spoof=0.0, close_token=0.0, http10=0.0,
                                    absolute=0.0))
        r103.response = plain_response(r103.rid)
        r103.response.interim = [(103, [b"Link: </a.css>; rel=preload",
                                        b"Transfer-Encoding: chunked"])]
        r103.response.notes.append("issue §5: TE on 103")
        out.append(("issue5_te_on_204_and_1xx", [ClientConn([r204, r103], "lockstep")]))
        # §5: lengths above 2^63-1.
        rid = b.rid()
        head = (f"POST /o/{rid} HTTP/1.1\r\nHost: sluice.test\r\n"
                f"Content-Length: {1 << 63}\r\n\r\n").encode()
        big = Req(rid, "POST", f"/o/{rid}", f"/o/{rid}", "HTTP/1.1", "sluice.test", head,
                  b"hello", b"hello", "length", plain_response(rid), "reject", (400, 413),
                  notes=["issue §5: Content-Length 2^63"])
        out.append(("issue5_content_length_2_63", [ClientConn([big], "pipeline")]))
        rid = b.rid()
        head = (f"POST /o/{rid} HTTP/1.1\r\nHost: sluice.test\r\n"
                f"Transfer-Encoding: chunked\r\n\r\n").encode()
        wire = b"8000000000000000\r\nhello\r\n0\r\n\r\n"
        big = Req(rid, "POST", f"/o/{rid}", f"/o/{rid}", "HTTP/1.1", "sluice.test", head,
                  wire, b"hello", "chunked", plain_response(rid), "reject", (400, 413),
                  reject_in="body", notes=["issue §5: chunk-size 2^63"])
        out.append(("issue5_chunk_size_2_63", [ClientConn([big], "pipeline")]))
        # Issue 19 §3: a chunked body that is malformed from its first bytes, sent with its
        # head, reaches no backend at all (sluice checks what came with the head before the
        # head goes anywhere); one that turns malformed later, after the head and a good chunk
        # went upstream, leaves that backend connection closed, never reused (the victims
        # would be captured by what was left on it).
        for kind, wire, cut in (("issue19_chunked_malformed_with_head", b"zz\r\nhello\r\n0\r\n\r\n", None),
                                ("issue19_chunked_malformed_later", b"5\r\nhello\r\nzz\r\nworld\r\n0\r\n\r\n", 10)):
            rid = b.rid()
            head = (f"POST /o/{rid} HTTP/1.1\r\nHost: sluice.test\r\n"
                    f"Transfer-Encoding: chunked\r\n\r\n").encode()
            bad = Req(rid, "POST", f"/o/{rid}", f"/o/{rid}", "HTTP/1.1", "sluice.test", head,
                      wire, b"hello", "chunked", plain_response(rid), "reject", (400,),
                      reject_in="head" if cut is None else "body", notes=[f"issue 19: {kind}"])
            cuts = [] if cut is None else [len(head) + cut]
            out.append((kind, [ClientConn([bad], "pipeline", cuts=cuts, delay=0.05)]))
        # §5: forwarding fields from an untrusted client.
        reqs = []
        for name, value in (("Forwarded", f"for={SPOOF_IP};proto=https"),
                            ("X-Real-IP", SPOOF_IP)):
            r = b.request(ReqOptions(method="GET", version="HTTP/1.1", body_kind="none",
                                     conn_owned=0.0, spoof=0.0, close_token=0.0, http10=0.0,
                                     response_adversarial=0.0, absolute=0.0))
            r.head = r.head[:-2] + f"{name}: {value}\r\n\r\n".encode()
            r.spoofs = [SPOOF_IP]
            r.notes.append(f"issue §5: spoofed {name}")
            reqs.append(r)
        out.append(("issue5_forwarded_and_x_real_ip", [ClientConn(reqs, "lockstep")]))
        # §5: owned fields in trailers.
        rid = b.rid()
        head = (f"POST /o/{rid} HTTP/1.1\r\nHost: sluice.test\r\n"
                f"Transfer-Encoding: chunked\r\n\r\n").encode()
        wire = (b"5\r\nhello\r\n0\r\nX-Forwarded-For: " + SPOOF_IP.encode()
                + b"\r\nContent-Length: 5\r\n\r\n")
        tr = Req(rid, "POST", f"/o/{rid}", f"/o/{rid}", "HTTP/1.1", "sluice.test", head, wire,
                 b"hello", "chunked", plain_response(rid), "any", (), [SPOOF_IP],
                 ["x-forwarded-for", "content-length"], notes=["issue §5: owned trailers"])
        out.append(("issue5_owned_fields_in_trailers", [ClientConn([tr], "pipeline")]))
        # The Connection spellings of the brief, exactly, each on a request with a body that
        # is a request, and a request pipelined behind it.
        for name, conn_lines, kind in CONNECTION_SPELLINGS:
            out.append((f"conn_spelling_{name}", [exact_connection_case(b, conn_lines, kind)]))
        # The same on responses.
        reqs = []
        for lines, framing in (([b"Connection: Transfer-Encoding"], "chunked"),
                               ([b"connection:content-length"], "length"),
                               ([b"Connection: keep-alive", b"Connection: Content-Length"],
                                "length"),
                               ([b"Connection: close,  CONTENT-LENGTH ,x"], "length")):
            r = b.request(ReqOptions(method="GET", version="HTTP/1.1", body_kind="none",
                                     conn_owned=0.0, spoof=0.0, close_token=0.0, http10=0.0,
                                     absolute=0.0))
            body = f"response to {r.rid} ".encode() + b"z" * 40
            spec = RespSpec(r.rid, 200, "normal", list(lines), body, framing,
                            notes=[f"exact {lines!r}"])
            if framing == "chunked":
                spec.fields.append(b"Transfer-Encoding: chunked")
                spec.chunk_sizes = split_sizes(rng, len(body))
            else:
                spec.fields.append(f"Content-Length: {len(body)}".encode())
            spec.closes = any(b"close" in ln for ln in lines)
            r.response = spec
            reqs.append(r)
        out.append(("resp_connection_spellings", [ClientConn(reqs, "pipeline")]))
        # Not in the issue: sluice's own refusal of a HEAD request must carry no content
        # (RFC 9110 §9.3.2), or a client reads that content as the next response.
        rid = b.rid()
        pad = "v" * b.limits.header_bytes_max
        head = f"HEAD /o/{rid} HTTP/1.1\r\nHost: sluice.test\r\nX-Pad: {pad}\r\n\r\n".encode()
        hd = Req(rid, "HEAD", f"/o/{rid}", f"/o/{rid}", "HTTP/1.1", "sluice.test", head, b"",
                 b"", "none", plain_response(rid), "reject", (431,),
                 notes=["sluice's own 431 to a HEAD request"])
        out.append(("refusal_of_head_request", [ClientConn([hd], "pipeline")]))
    if group == "sticky":
        # §3: 100 Name:value fields and a 60-byte body, sticky.
        out.append(("issue3_sticky_100_name_value_fields",
                    gen_response_limit(b, 100, None, nospace=True)))
        out.append(("issue6_100_set_cookie_fields",
                    gen_response_limit(b, 101, None, nospace=False, set_cookies=True)))
    if group == "manyfields":
        out.append(("issue3_160_name_value_fields",
                    gen_response_limit(b, 160, None, nospace=True)))
    if group == "wide":
        L = b.limits.header_bytes_max
        out.append(("issue3_wide_sticky_cross_buffer",
                    gen_response_limit(b, 1000, L - 8, nospace=True, side=True)))
    del rng
    return out


GROUP_MIX = {
    # group: [(kind, weight)]
    "default": [("mixed", 5), ("conn_tokens", 4), ("chunked", 2), ("responses", 3)],
    "sticky": [("responses", 5), ("mixed", 2), ("conn_tokens", 2)],
    "manyfields": [("responses", 3), ("mixed", 2), ("conn_tokens", 2)],
    "wide": [("responses", 3), ("mixed", 2), ("conn_tokens", 2)],
    "compress": [("responses", 4), ("mixed", 2), ("chunked", 2)],
}


def sweep_cases(b: Builder, group: str) -> list[tuple[str, list[ClientConn]]]:
    """Every limit at delta -2..+2, and response heads around the limits."""
    out = []
    for d in (-2, -1, 0, 1, 2):
        out.append((f"head_bytes_limit{d:+d}", gen_head_limit(b, d)))
    for d in (-1, 0, 1):
        out.append((f"field_count_limit{d:+d}", gen_count_limit(b, d)))
    if group in ("default",):
        for d in (-1, 0, 1):
            out.append((f"target_bytes_limit{d:+d}", gen_target_limit(b, d)))
    L, N = b.limits.header_bytes_max, b.limits.headers_count_max
    for name, n, head in (("resp_fields_at_count", N, None),
                          ("resp_fields_over_count", N + 1, None),
                          ("resp_head_at_bytes", 20, L),
                          ("resp_head_over_bytes", 20, L + 1),
                          ("resp_head_near_bytes_many_fields", min(N, 90), L - 200),
                          ("resp_40_name_value_fields", 40, None)):
        out.append((name, gen_response_limit(b, n, head, nospace=True)))
    return out


def generate(seed: str, group: str, limits: Limits, n_random: int
             ) -> list[Case]:
    """The fixed issue cases, the limit sweeps, then `n_random` random cases. Each case has
    its own generator seeded by (seed, group, its name), so adding a case changes no other."""
    cases: list[Case] = []

    def add(key: str, tag: str, kind: str, conns_fn, index: int):
        b = Builder(case_rng(seed, group, key), f"{group[:2]}{tag}", limits)
        cases.append(Case(group, index, seed, kind, conns_fn(b), key=key, tag=b.tag))

    probe = Builder(random.Random(0), "probe", limits)
    for i, (name, _) in enumerate(fixed_issue_cases(probe, group)):
        add(f"f:{name}", f"f{i}", name, lambda b, i=i: fixed_issue_cases(b, group)[i][1], i)
    for i, (name, _) in enumerate(sweep_cases(probe, group)):
        add(f"s:{name}", f"s{i}", name, lambda b, i=i: sweep_cases(b, group)[i][1], i)
    kinds = GROUP_MIX[group]
    gens = {"mixed": gen_mixed, "conn_tokens": gen_conn_tokens, "chunked": gen_chunked,
            "responses": gen_responses}
    for k in range(n_random):
        rng = case_rng(seed, group, f"r:{k}")
        kind = rng.choices([k for k, _ in kinds], [w for _, w in kinds])[0]
        add(f"r:{k}", f"{k}", kind, lambda b, kind=kind: gens[kind](b), k)
    return cases
