"""An HTTP/2 server for the tests, on hyper-h2 (installed by .ci/run): members of h2c and h2
pools whose answers the tests set (test_health_http2.py, test_http2_backends.py)."""

import socket
import ssl
import threading

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings


class H2Member:
    """An HTTP/2 server (prior knowledge, or TLS with ALPN h2): `statuses` maps a path to the
    status it answers (200 otherwise), with the member's name as the body. `refusals` maps a
    path to how many of its next requests are reset with REFUSED_STREAM; `goaways`, to how
    many are left unprocessed by a GOAWAY whose last stream is the one before, the connection
    then closed; `held`, paths it never answers (`resets` records the error codes of the
    RST_STREAMs that end them). `max_streams`, when set, is the SETTINGS_MAX_CONCURRENT_STREAMS it announces and
    holds to from its first byte (a stream past it breaks the connection, as hyper-h2 refuses
    it with a protocol error); `streams_open_max` is the most it saw open at once. `answers`
    maps a path to the frames that answer it, in order: ("headers", fields, end_stream),
    ("data", bytes, end_stream), ("reset", error_code, None)."""

    def __init__(self, name, tls=None, max_streams=None):
        self.name = name
        self.max_streams = max_streams
        self.streams_open_max = 0
        self.statuses = {}
        self.answers = {}
        self.refusals = {}
        self.goaways = {}
        # Paths whose streams are never answered; the resets that end them, by error code.
        self.held = set()
        self.resets = []
        self.requests = []  # dicts of pseudo-fields and user-agent
        self.tls = tls
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        threading.Thread(target=self._accept, daemon=True).start()

    def probes(self):
        return [r for r in self.requests if r[":path"] == "/healthz"]

    def close(self):
        self.listener.close()

    def _accept(self):
        while True:
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(raw,), daemon=True).start()

    def _serve(self, raw):
        try:
            conn = self.tls.wrap_socket(raw, server_side=True) if self.tls else raw
            h2conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
            if self.max_streams is not None:
                h2conn.local_settings = h2.settings.Settings(
                    client=False, initial_values={h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS: self.max_streams})
            h2conn.initiate_connection()
            conn.sendall(h2conn.data_to_send())
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                for event in h2conn.receive_data(data):
                    if isinstance(event, h2.events.RequestReceived):
                        fields = {k.decode(): v.decode() for k, v in event.headers}
                        self.requests.append(fields)
                        self.streams_open_max = max(self.streams_open_max, h2conn.open_inbound_streams)
                        path = fields[":path"]
                        if self.refusals.get(path, 0) > 0:
                            self.refusals[path] -= 1
                            h2conn.reset_stream(event.stream_id, h2.errors.ErrorCodes.REFUSED_STREAM)
                            continue
                        if self.goaways.get(path, 0) > 0:
                            self.goaways[path] -= 1
                            h2conn.close_connection(last_stream_id=max(0, event.stream_id - 2))
                            conn.sendall(h2conn.data_to_send())
                            return
                        if path in self.held:
                            continue
                        if path in self.answers:
                            for kind, what, end_stream in self.answers[path]:
                                if kind == "headers":
                                    h2conn.send_headers(event.stream_id, what, end_stream=end_stream)
                                elif kind == "reset":
                                    h2conn.reset_stream(event.stream_id, what)
                                else:
                                    size = h2conn.max_outbound_frame_size
                                    for at in range(0, max(len(what), 1), size):
                                        last = end_stream and at + size >= len(what)
                                        h2conn.send_data(event.stream_id, what[at:at + size], end_stream=last)
                            continue
                        status = self.statuses.get(path, 200)
                        body = self.name.encode()
                        h2conn.send_headers(event.stream_id, [(":status", str(status)),
                                                              ("content-length", str(len(body)))])
                        h2conn.send_data(event.stream_id, body, end_stream=True)
                    elif isinstance(event, h2.events.StreamReset):
                        self.resets.append(event.error_code)
                    elif isinstance(event, h2.events.DataReceived):
                        h2conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                conn.sendall(h2conn.data_to_send())
        except (OSError, ssl.SSLError, h2.exceptions.ProtocolError):
            pass
        finally:
            raw.close()
