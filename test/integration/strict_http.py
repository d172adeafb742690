"""A strict HTTP/1.1 message parser for the smuggling oracle, written from RFC 9112 and
RFC 9110 (not from sluice's parser, so the two cannot share a mistake).

It reads a byte stream (what one connection carried) into messages and refuses, with the
reason and the offset, everything a conforming *sender* may not produce. It is used on
the bytes sluice sends: to a backend (requests) and to a client (responses). Where the
RFCs let a recipient be lenient (bare LF, whitespace before the colon, obs-fold, a repeated
Content-Length with equal values, empty lines before the request line) this parser is not:
sluice writes those bytes itself and must write them cleanly.

    parse_request(data, pos, eof=False)            -> Message | None (None: incomplete)
    parse_response(data, pos, method, eof=False)   -> Message | None
    split_requests(data, eof)                      -> Stream (messages, end, error, partial)
    split_responses(data, methods, eof)            -> Stream
    HttpError(reason, offset)                      everything that is not a valid message

Grammar followed (RFC 9112 unless noted):
    HTTP-message   = start-line CRLF *( field-line CRLF ) CRLF [ message-body ]     §2.1
    request-line   = method SP request-target SP HTTP-version                      §3
    status-line    = HTTP-version SP status-code SP [ reason-phrase ]              §4
    HTTP-version   = "HTTP" "/" DIGIT "." DIGIT                                    §2.3
    field-line     = field-name ":" OWS field-value OWS                            §5
    field-name     = token; token = 1*tchar                            RFC 9110 §5.1, §5.6.2
    field-value    = *( field-vchar / SP / HTAB ), not starting or ending in SP/HTAB
                                                                       RFC 9110 §5.5
    chunked-body   = *chunk last-chunk trailer-section CRLF                         §7.1
    chunk          = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
    chunk-ext      = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
    chunk-ext-val  = token / quoted-string
    message body length                                                             §6.3
"""

from __future__ import annotations

from dataclasses import dataclass, field

CRLF = b"\r\n"
TCHAR = frozenset(b"!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
HEXDIG = frozenset(b"0123456789abcdefABCDEF")
DIGIT = frozenset(b"0123456789")
# field-vchar = VCHAR / obs-text (RFC 9110 §5.5)
FIELD_VCHAR = frozenset(range(0x21, 0x7F)) | frozenset(range(0x80, 0x100))
OWS_CHARS = b" \t"
# request-target bytes (RFC 3986 §2: unreserved, reserved, "%"); everything else is refused
URI_CHARS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                      b"-._~:/?#[]@!$&'()*+,;=%")
# qdtext = HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text (RFC 9110 §5.6.4)
QDTEXT = frozenset(b"\t \x21") | frozenset(range(0x23, 0x5C)) | frozenset(range(0x5D, 0x7F)) \
    | frozenset(range(0x80, 0x100))
LENGTH_MAX = (1 << 63) - 1  # what a signed 64-bit length can hold; more is refused
HEAD_BYTES_MAX = 1 << 20  # a sanity bound, far above anything sluice may send
CHUNK_LINE_MAX = 4096


class HttpError(Exception):
    """The bytes at `offset` are not a valid HTTP/1.1 message (or not one a sender may
    produce)."""

    def __init__(self, reason: str, offset: int):
        super().__init__(f"{reason} (at byte {offset})")
        self.reason = reason
        self.offset = offset


@dataclass
class Field:
    name: bytes
    value: bytes
    raw: bytes  # the whole line without CRLF

    @property
    def lname(self) -> str:
        return self.name.decode("ascii").lower()

    def text(self) -> str:
        return self.value.decode("latin-1")


@dataclass
class Message:
    kind: str  # "request" | "response"
    start: int  # offset of the first byte in the stream
    head_end: int  # offset just past the empty line ending the head
    end: int  # offset just past the message (body included)
    version: str
    fields: list[Field]
    method: str = ""
    target: str = ""
    status: int = 0
    reason: str = ""
    framing: str = "none"  # none | length | chunked | close
    body: bytes = b""
    chunks: list[tuple[int, bytes]] = field(default_factory=list)  # (size, raw chunk-ext)
    trailers: list[Field] = field(default_factory=list)
    interim: list["Message"] = field(default_factory=list)  # 1xx before a final response
    # Rules for senders this message breaks without being unparseable (RFC 9112 §6.1,
    # RFC 9110 §8.6): kept here for the oracle to judge, since a recipient could still
    # frame the message.
    violations: list[str] = field(default_factory=list)
    raw: bytes = b""

    def get_all(self, name: str) -> list[str]:
        name = name.lower()
        return [f.text() for f in self.fields if f.lname == name]

    def get(self, name: str) -> str | None:
        vals = self.get_all(name)
        return vals[0] if vals else None

    def has(self, name: str) -> bool:
        return bool(self.get_all(name))

    def names(self) -> list[str]:
        return [f.lname for f in self.fields]

    def connection_tokens(self) -> list[str]:
        return list_tokens(self.get_all("connection"))

    def head(self) -> bytes:
        return self.raw[: self.head_end - self.start]

    def describe(self) -> str:
        if self.kind == "request":
            first = f"{self.method} {self.target} {self.version}"
        else:
            first = f"{self.version} {self.status} {self.reason}"
        return f"{first} framing={self.framing} body={len(self.body)}B"


def list_tokens(values) -> list[str]:
    """The lowercased elements of comma-separated list fields, empty elements ignored
    (RFC 9110 §5.6.1)."""
    out = []
    for v in values:
        for t in v.split(","):
            t = t.strip(" \t").lower()
            if t:
                out.append(t)
    return out


def is_token(b: bytes) -> bool:
    return bool(b) and all(c in TCHAR for c in b)


# ---------------------------------------------------------------------------------------
# Lines


def _line(data: bytes, pos: int, eof: bool, limit: int, what: str) -> tuple[bytes, int] | None:
    """The line starting at `pos` (without its CRLF) and the offset after the CRLF; None
    when the stream ends first. A bare CR or bare LF is an error (RFC 9112 §2.2)."""
    lf = data.find(b"\n", pos, pos + limit + 2)
    if lf < 0:
        end = min(len(data), pos + limit + 2)
        cr = data.find(b"\r", pos, end)
        if cr >= 0 and cr + 1 < len(data):
            raise HttpError(f"bare CR in {what}", cr)
        if len(data) - pos > limit + 1:
            raise HttpError(f"{what} longer than {limit} bytes", pos)
        if eof:
            raise HttpError(f"stream ends inside {what}", len(data))
        return None
    if lf == pos or data[lf - 1] != 0x0D:
        raise HttpError(f"bare LF in {what}", lf)
    line = data[pos:lf - 1]
    cr = line.find(b"\r")
    if cr >= 0:
        raise HttpError(f"bare CR in {what}", pos + cr)
    return line, lf + 1


def _parse_version(v: bytes, offset: int) -> str:
    if (len(v) != 8 or not v.startswith(b"HTTP/") or v[5] not in DIGIT or v[6] != 0x2E
            or v[7] not in DIGIT):
        raise HttpError(f"bad HTTP-version {v[:20]!r}", offset)
    text = v.decode("ascii")
    if text not in ("HTTP/1.0", "HTTP/1.1"):
        raise HttpError(f"HTTP-version {text} is not HTTP/1.x", offset)
    return text


def _parse_field_line(line: bytes, offset: int, what: str = "field line") -> Field:
    if line[:1] in (b" ", b"\t"):
        raise HttpError(f"obs-fold or whitespace before a {what}", offset)
    colon = line.find(b":")
    if colon < 0:
        raise HttpError(f"{what} without a colon: {line[:80]!r}", offset)
    name = line[:colon]
    if not name:
        raise HttpError(f"empty field name: {line[:80]!r}", offset)
    if not is_token(name):
        bad = next(i for i, c in enumerate(name) if c not in TCHAR)
        kind = "whitespace before the colon" if name[bad] in OWS_CHARS else "invalid byte"
        raise HttpError(f"{kind} in field name {name[:80]!r}", offset + bad)
    value = line[colon + 1:].strip(OWS_CHARS)
    for i, c in enumerate(value):
        if c not in FIELD_VCHAR and c not in OWS_CHARS:
            raise HttpError(f"invalid byte {c:#04x} in the value of {name.decode()!r}",
                            offset + colon + 1 + i)
    return Field(name, value, line)


def _parse_fields(data: bytes, pos: int, eof: bool, head_start: int, what: str
                  ) -> tuple[list[Field], int] | None:
    """Field lines from `pos` up to and including the empty line."""
    fields = []
    while True:
        got = _line(data, pos, eof, HEAD_BYTES_MAX, what)
        if got is None:
            return None
        line, nxt = got
        if nxt - head_start > HEAD_BYTES_MAX:
            raise HttpError(f"{what} longer than {HEAD_BYTES_MAX} bytes", head_start)
        if not line:
            return fields, nxt
        fields.append(_parse_field_line(line, pos))
        pos = nxt


# ---------------------------------------------------------------------------------------
# Bodies


def _parse_chunk_ext(ext: bytes, offset: int):
    """chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )"""
    i, n = 0, len(ext)

    def ows():
        nonlocal i
        while i < n and ext[i] in OWS_CHARS:
            i += 1

    while True:
        ows()
        if i == n:
            return
        if ext[i] != 0x3B:  # ;
            raise HttpError(f"bad chunk extension {ext[:80]!r}", offset + i)
        i += 1
        ows()
        start = i
        while i < n and ext[i] in TCHAR:
            i += 1
        if i == start:
            raise HttpError(f"chunk extension without a name {ext[:80]!r}", offset + i)
        ows()
        if i < n and ext[i] == 0x3D:  # =
            i += 1
            ows()
            if i < n and ext[i] == 0x22:  # quoted-string
                i += 1
                while True:
                    if i >= n:
                        raise HttpError(f"unterminated quoted-string {ext[:80]!r}", offset + i)
                    c = ext[i]
                    if c == 0x22:
                        i += 1
                        break
                    if c == 0x5C:  # quoted-pair
                        if i + 1 >= n or not (ext[i + 1] in FIELD_VCHAR or ext[i + 1] in OWS_CHARS):
                            raise HttpError("bad quoted-pair in chunk extension", offset + i)
                        i += 2
                        continue
                    if c not in QDTEXT:
                        raise HttpError(f"invalid byte {c:#04x} in chunk extension", offset + i)
                    i += 1
            else:
                start = i
                while i < n and ext[i] in TCHAR:
                    i += 1
                if i == start:
                    raise HttpError(f"chunk extension without a value {ext[:80]!r}", offset + i)


def _parse_chunked(data: bytes, pos: int, eof: bool, msg: Message) -> int | None:
    body = bytearray()
    while True:
        got = _line(data, pos, eof, CHUNK_LINE_MAX, "chunk-size line")
        if got is None:
            return None
        line, nxt = got
        digits = 0
        while digits < len(line) and line[digits] in HEXDIG:
            digits += 1
        if digits == 0:
            raise HttpError(f"chunk-size is not hexadecimal: {line[:40]!r}", pos)
        size = int(line[:digits], 16)
        if size > LENGTH_MAX:
            raise HttpError(f"chunk-size {line[:digits]!r} exceeds 2^63-1", pos)
        _parse_chunk_ext(line[digits:], pos + digits)
        msg.chunks.append((size, line[digits:]))
        pos = nxt
        if size == 0:
            break
        if len(data) < pos + size + 2:
            if eof:
                raise HttpError("stream ends inside chunk-data", len(data))
            return None
        body += data[pos:pos + size]
        pos += size
        if data[pos:pos + 2] != CRLF:
            raise HttpError(f"chunk-data not followed by CRLF: {data[pos:pos + 8]!r}", pos)
        pos += 2
    got = _parse_fields(data, pos, eof, pos, "trailer section")
    if got is None:
        return None
    msg.trailers, pos = got
    msg.body = bytes(body)
    return pos


def _content_length(msg: Message, offset: int) -> int:
    values = msg.get_all("content-length")
    if len(values) > 1:
        raise HttpError(f"{len(values)} Content-Length fields {values!r}", offset)
    v = values[0]
    if not v or any(c not in "0123456789" for c in v):
        raise HttpError(f"invalid Content-Length {v!r}", offset)
    n = int(v)
    if n > LENGTH_MAX:
        raise HttpError(f"Content-Length {v} exceeds 2^63-1", offset)
    return n


def _transfer_codings(msg: Message, offset: int) -> list[str]:
    codings = list_tokens(msg.get_all("transfer-encoding"))
    for c in codings:
        name = c.split(";", 1)[0].strip(" \t")
        if not is_token(name.encode("latin-1")):
            raise HttpError(f"invalid transfer coding {c!r}", offset)
    return codings


def _fixed_body(data: bytes, pos: int, n: int, eof: bool, msg: Message) -> int | None:
    if len(data) < pos + n:
        if eof:
            raise HttpError(f"stream ends after {len(data) - pos} of {n} body bytes", len(data))
        return None
    msg.body = data[pos:pos + n]
    return pos + n


# ---------------------------------------------------------------------------------------
# Requests


def parse_request(data: bytes, pos: int = 0, eof: bool = False) -> Message | None:
    """One request starting exactly at `pos`. None when the stream ends before it does
    (and `eof` is False)."""
    start = pos
    got = _line(data, pos, eof, HEAD_BYTES_MAX, "request line")
    if got is None:
        return None
    line, pos = got
    if not line:
        raise HttpError("empty line before the request line", start)
    parts = line.split(b" ")
    if len(parts) != 3:
        raise HttpError(f"request line is not `method SP target SP version`: {line[:120]!r}",
                        start)
    method, target, version = parts
    if not is_token(method):
        raise HttpError(f"invalid method {method[:40]!r}", start)
    if not target:
        raise HttpError("empty request-target", start)
    for i, c in enumerate(target):
        if c not in URI_CHARS:
            raise HttpError(f"invalid byte {c:#04x} in request-target", start + len(method) + 1 + i)
    version_text = _parse_version(version, start + len(method) + len(target) + 2)
    got = _parse_fields(data, pos, eof, start, "request head")
    if got is None:
        return None
    fields, pos = got
    msg = Message("request", start, pos, pos, version_text, fields,
                  method=method.decode("ascii"), target=target.decode("ascii"))
    _check_request_target(msg, start)
    hosts = msg.get_all("host")
    if version_text == "HTTP/1.1" and len(hosts) != 1:
        raise HttpError(f"HTTP/1.1 request with {len(hosts)} Host fields", start)
    if len(hosts) > 1:
        raise HttpError("more than one Host field", start)
    # Message body length, RFC 9112 §6.3.
    has_te = msg.has("transfer-encoding")
    has_cl = msg.has("content-length")
    if has_te and has_cl:
        raise HttpError("both Transfer-Encoding and Content-Length", start)
    if has_te:
        if version_text == "HTTP/1.0":
            raise HttpError("Transfer-Encoding in an HTTP/1.0 request", start)
        codings = _transfer_codings(msg, start)
        if codings != ["chunked"]:
            raise HttpError(f"transfer codings {codings!r} are not exactly `chunked`", start)
        msg.framing = "chunked"
        end = _parse_chunked(data, pos, eof, msg)
    elif has_cl:
        msg.framing = "length"
        end = _fixed_body(data, pos, _content_length(msg, start), eof, msg)
    else:
        msg.framing = "none"
        end = pos
    if end is None:
        return None
    msg.end = end
    msg.raw = data[start:end]
    return msg


def _check_request_target(msg: Message, offset: int):
    t = msg.target
    if msg.method == "CONNECT":
        return  # authority-form; a reverse proxy answers it itself
    if t == "*":
        if msg.method != "OPTIONS":
            raise HttpError("asterisk-form target outside OPTIONS", offset)
        return
    if not (t.startswith("/") or "://" in t):
        raise HttpError(f"request-target {t[:60]!r} is neither origin- nor absolute-form", offset)
    if "#" in t:
        raise HttpError("fragment in request-target", offset)
    i = t.find("%")
    while i >= 0:
        if i + 2 >= len(t) or t[i + 1] not in "0123456789abcdefABCDEF" \
                or t[i + 2] not in "0123456789abcdefABCDEF":
            raise HttpError(f"bad percent-encoding in {t[:60]!r}", offset)
        i = t.find("%", i + 1)


# ---------------------------------------------------------------------------------------
# Responses


def parse_response(data: bytes, pos: int = 0, method: str = "GET", eof: bool = False,
                   request_version: str = "HTTP/1.1", allow_no_reason_sp: bool = False
                   ) -> Message | None:
    """One response (with any 1xx interim responses before it, in `.interim`) starting
    exactly at `pos`, to a request with `method`. None when incomplete; a close-delimited
    body is complete only at `eof`. 101 is returned as final (framing "none")."""
    interim = []
    while True:
        msg = _parse_response_head(data, pos, eof, allow_no_reason_sp)
        if msg is None:
            return None
        _sender_rules(msg, method, request_version)
        if 100 <= msg.status < 200 and msg.status != 101:
            msg.raw = data[msg.start:msg.head_end]
            interim.append(msg)
            pos = msg.head_end
            continue
        break
    msg.interim = interim
    pos = msg.head_end
    has_te = msg.has("transfer-encoding")
    has_cl = msg.has("content-length")
    if method == "HEAD" or msg.status < 200 or msg.status in (204, 304):
        msg.framing = "none"
        end = pos
    elif method == "CONNECT" and 200 <= msg.status < 300:
        raise HttpError("2xx to CONNECT: a tunnel, not a message", msg.start)
    elif has_te and has_cl:
        raise HttpError("both Transfer-Encoding and Content-Length", msg.start)
    elif has_te:
        codings = _transfer_codings(msg, msg.start)
        if codings and codings[-1] == "chunked":
            if codings.count("chunked") != 1:
                raise HttpError(f"chunked applied more than once: {codings!r}", msg.start)
            msg.framing = "chunked"
            end = _parse_chunked(data, pos, eof, msg)
        else:
            msg.framing = "close"
            end = len(data) if eof else None
            if end is not None:
                msg.body = data[pos:end]
    elif has_cl:
        msg.framing = "length"
        end = _fixed_body(data, pos, _content_length(msg, msg.start), eof, msg)
    else:
        msg.framing = "close"
        end = len(data) if eof else None
        if end is not None:
            msg.body = data[pos:end]
    if end is None:
        return None
    msg.start = interim[0].start if interim else msg.start
    msg.end = end
    msg.raw = data[msg.start:end]
    return msg


def _parse_response_head(data: bytes, pos: int, eof: bool, allow_no_reason_sp: bool
                         ) -> Message | None:
    start = pos
    got = _line(data, pos, eof, HEAD_BYTES_MAX, "status line")
    if got is None:
        return None
    line, pos = got
    version = _parse_version(line[:8], start)
    rest = line[8:]
    if rest[:1] != b" " or len(rest) < 4 or any(c not in DIGIT for c in rest[1:4]):
        raise HttpError(f"bad status line {line[:80]!r}", start)
    status = int(rest[1:4])
    if status < 100:
        raise HttpError(f"status code {status} below 100", start)
    tail = rest[4:]
    if tail[:1] != b" ":
        if tail or not allow_no_reason_sp:
            raise HttpError(f"status line without SP after the code: {line[:80]!r}", start)
    reason = tail[1:]
    for i, c in enumerate(reason):
        if c not in FIELD_VCHAR and c not in OWS_CHARS:
            raise HttpError(f"invalid byte {c:#04x} in reason-phrase", start + 13 + i)
    got = _parse_fields(data, pos, eof, start, "response head")
    if got is None:
        return None
    fields, pos = got
    return Message("response", start, pos, pos, version, fields, status=status,
                   reason=reason.decode("latin-1"))


def _sender_rules(msg: Message, method: str, request_version: str):
    """MUST NOTs for the sender of a response that a recipient could still frame."""
    te = msg.has("transfer-encoding")
    if te and (msg.status < 200 or msg.status == 204):
        msg.violations.append(f"Transfer-Encoding in a {msg.status} response "
                              "(RFC 9112 §6.1: a server MUST NOT send it)")
    if te and request_version == "HTTP/1.0":
        msg.violations.append("Transfer-Encoding in a response to an HTTP/1.0 request "
                              "(RFC 9112 §6.1)")
    if msg.has("content-length") and (msg.status < 200 or msg.status == 204):
        msg.violations.append(f"Content-Length in a {msg.status} response (RFC 9110 §8.6)")
    if len(msg.get_all("content-length")) > 1:
        msg.violations.append("more than one Content-Length field")


# ---------------------------------------------------------------------------------------
# Streams


@dataclass
class Stream:
    messages: list[Message]
    end: int  # offset after the last complete message
    error: HttpError | None = None  # what stopped the split, if not the end of the data
    partial: bytes = b""  # bytes after `end` that are not (yet) a complete message

    @property
    def clean(self) -> bool:
        return self.error is None and not self.partial


def split_requests(data: bytes, eof: bool = False) -> Stream:
    """Every complete request in `data`, in order; what follows the last one is `partial`
    (incomplete) or the `error` that made it unparseable."""
    out, pos = [], 0
    while pos < len(data):
        try:
            msg = parse_request(data, pos, eof)
        except HttpError as e:
            return Stream(out, pos, e, data[pos:])
        if msg is None:
            return Stream(out, pos, None, data[pos:])
        out.append(msg)
        pos = msg.end
    return Stream(out, pos)


def split_responses(data: bytes, requests, eof: bool = False, allow_no_reason_sp=False
                    ) -> Stream:
    """Every complete response in `data`, in order. `requests` gives, per response, the
    request's (method, version) (or just the method) so HEAD and HTTP/1.0 are framed right;
    responses beyond it are read as answers to GET."""
    out, pos = [], 0
    while pos < len(data):
        i = len(out)
        req = requests[i] if i < len(requests) else ("GET", "HTTP/1.1")
        method, version = (req, "HTTP/1.1") if isinstance(req, str) else req
        try:
            msg = parse_response(data, pos, method, eof, version, allow_no_reason_sp)
        except HttpError as e:
            return Stream(out, pos, e, data[pos:])
        if msg is None:
            return Stream(out, pos, None, data[pos:])
        out.append(msg)
        pos = msg.end
        if msg.status == 101:
            break  # the rest is a tunnel
    return Stream(out, pos, None, data[pos:])
