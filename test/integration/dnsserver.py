"""A small authoritative DNS server for the tests, written here: UDP and TCP on one loopback
port (bound to port 0), answering A and AAAA from a table the test changes while sluice runs.

    server = DnsServer()                 # started
    server.set("app.test", a=["127.0.0.1"], ttl=1)
    server.set("_http._tcp.app.test", srv=[(10, 1, 8080, "app.test")])  # priority, weight, port, target
    server.mode = "servfail"             # or "nxdomain", "drop" (no reply), "answer"
    ... server.queries (a list of (name, type)) ... server.stop()

A name not in the table is NXDOMAIN. Replies are built by hand (RFC 1035 §4): the question is
echoed, each answer's owner is a pointer to it.
"""

import socket
import struct
import threading

TYPE_A = 1
TYPE_AAAA = 28
TYPE_SRV = 33
CLASS_IN = 1


def _parse_query(data: bytes):
    if len(data) < 12:
        return None
    ident, flags, qd, _an, _ns, _ar = struct.unpack("!HHHHHH", data[:12])
    if flags & 0x8000 or qd != 1:
        return None
    labels, at = [], 12
    while True:
        if at >= len(data):
            return None
        n = data[at]
        at += 1
        if n == 0:
            break
        if n & 0xC0 or at + n > len(data):
            return None
        labels.append(data[at:at + n].decode("ascii", "replace"))
        at += n
    if at + 4 > len(data):
        return None
    qtype, qclass = struct.unpack("!HH", data[at:at + 4])
    return ident, flags, ".".join(labels).lower(), qtype, qclass, data[12:at + 4]


def _encode_name(name: str) -> bytes:
    out = b""
    for label in name.rstrip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode("ascii")
    return out + b"\0"


class DnsServer:
    def __init__(self, host: str = "127.0.0.1"):
        self.records: dict[str, dict] = {}
        self.mode = "answer"
        self.queries: list[tuple[str, int]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.udp, self.tcp = self._bind_pair(host)
        self.port = self.udp.getsockname()[1]
        self.tcp.listen(16)
        self.udp.settimeout(0.1)
        self.tcp.settimeout(0.1)
        self.address = f"{host}:{self.port}"
        self._threads = [threading.Thread(target=self._serve_udp, daemon=True),
                         threading.Thread(target=self._serve_tcp, daemon=True)]
        for t in self._threads:
            t.start()

    @staticmethod
    def _bind_pair(host):
        """A UDP and a TCP socket on one port (the kernel picks the UDP one; another socket may
        hold it for TCP, then another is picked)."""
        for _ in range(50):
            udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            udp.bind((host, 0))
            tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                tcp.bind((host, udp.getsockname()[1]))
                return udp, tcp
            except OSError:
                udp.close()
                tcp.close()
        raise OSError("no port free for both UDP and TCP")

    def set(self, name: str, a=(), aaaa=(), srv=(), ttl: int = 1):
        with self._lock:
            self.records[name.lower().rstrip(".")] = {"a": list(a), "aaaa": list(aaaa),
                                                     "srv": list(srv), "ttl": ttl}

    def remove(self, name: str):
        with self._lock:
            self.records.pop(name.lower().rstrip("."), None)

    def count(self, name: str) -> int:
        with self._lock:
            return sum(1 for n, _ in self.queries if n == name.lower())

    def reply(self, data: bytes) -> bytes | None:
        parsed = _parse_query(data)
        if parsed is None:
            return None
        ident, flags, name, qtype, qclass, question = parsed
        with self._lock:
            self.queries.append((name, qtype))
            mode = self.mode
            record = self.records.get(name)
        if mode == "drop":
            return None
        rd = flags & 0x0100
        rcode = 0
        answers = []
        if mode == "servfail":
            rcode = 2
        elif record is None or mode == "nxdomain":
            rcode = 3
        elif qclass == CLASS_IN and qtype == TYPE_SRV:
            for priority, weight, port, target in record["srv"]:
                rdata = struct.pack("!HHH", priority, weight, port) + _encode_name(target)
                answers.append(struct.pack("!HHHIH", 0xC00C, qtype, CLASS_IN, record["ttl"],
                                           len(rdata)) + rdata)
        elif qclass == CLASS_IN and qtype in (TYPE_A, TYPE_AAAA):
            family = socket.AF_INET if qtype == TYPE_A else socket.AF_INET6
            for text in record["a" if qtype == TYPE_A else "aaaa"]:
                rdata = socket.inet_pton(family, text)
                answers.append(struct.pack("!HHHIH", 0xC00C, qtype, CLASS_IN, record["ttl"],
                                           len(rdata)) + rdata)
        header = struct.pack("!HHHHHH", ident, 0x8400 | rd | 0x0080 | rcode, 1, len(answers), 0, 0)
        return header + question + b"".join(answers)

    def _serve_udp(self):
        while not self._stop.is_set():
            try:
                data, peer = self.udp.recvfrom(2048)
            except socket.timeout:
                continue
            except OSError:
                return
            out = self.reply(data)
            if out is not None:
                try:
                    self.udp.sendto(out, peer)
                except OSError:
                    pass

    def _serve_tcp(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.tcp.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(2.0)
                try:
                    size = struct.unpack("!H", conn.recv(2))[0]
                    data = b""
                    while len(data) < size:
                        chunk = conn.recv(size - len(data))
                        if not chunk:
                            break
                        data += chunk
                    out = self.reply(data)
                    if out is not None:
                        conn.sendall(struct.pack("!H", len(out)) + out)
                except (OSError, struct.error):
                    pass

    def stop(self):
        self._stop.set()
        for t in self._threads:
            t.join(timeout=1.0)
        self.udp.close()
        self.tcp.close()
