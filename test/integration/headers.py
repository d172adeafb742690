"""Header access shared by the backend's view of a request and the client's view of a
response: case-insensitive lookup and Connection tokens (RFC 9110 §5.3, §7.6.1)."""
from __future__ import annotations


def tokens(values) -> set[str]:
    """The lowercased tokens of comma-separated field values."""
    out = set()
    for v in values:
        for t in v.split(","):
            t = t.strip().lower()
            if t:
                out.add(t)
    return out


class HeaderAccess:
    """Mixin for a message with `headers: list[tuple[str, str]]`."""

    headers: list[tuple[str, str]]

    def header(self, name: str) -> str | None:
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return None

    def header_all(self, name: str) -> list[str]:
        name = name.lower()
        return [v for k, v in self.headers if k.lower() == name]

    def has_header(self, name: str) -> bool:
        return self.header(name) is not None

    def header_names(self) -> set[str]:
        return {k.lower() for k, _ in self.headers}

    def connection_tokens(self) -> set[str]:
        return tokens(self.header_all("connection"))
