"""The settings table as sluice prints it (`sluice settings`), and the pieces of the docs the
docs tests compare it with: the README's flag tables and docs/CONFIG.md's full example."""

import re
import subprocess
from dataclasses import dataclass


@dataclass
class Setting:
    flag: str          # "--header-bytes-max SIZE", "--backend ADDR,weight=N", or "-"
    key: str           # "limits.header_bytes_max", "pools.NAME.timeouts.connect", or "-"
    default: str       # as the command line and the help show it: "16KiB", "one per CPU"
    file_default: str  # as a file writes it: '"16KiB"', ".auto", or "-" when there is none
    reload: str        # "applies", "restart", or "-" (command line only)

    @property
    def flag_name(self):
        """`--max-connections`, or None for a setting only in files and a backend's options."""
        first = self.flag.split()[0]
        if first == "-" or "," in self.flag or self.key.endswith("[].address"):
            return None
        return first

    @property
    def backend_option(self):
        """`weight` for `--backend ADDR,weight=N`, else None."""
        m = re.fullmatch(r"--backend ADDR,([a-z-]+)=\S+", self.flag)
        return m.group(1) if m else None


def read(sluice_bin):
    done = subprocess.run([sluice_bin, "settings"], capture_output=True, text=True, timeout=10)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.split(r"\s{2,}", lines[0]) == ["flag", "file key", "default", "in a file", "reload"]
    table = []
    for line in lines[1:]:
        cells = re.split(r"\s{2,}", line.rstrip())
        assert len(cells) == 5, line
        table.append(Setting(*cells))
    assert len(table) >= 50, table
    return table


def readme_flag_rows(readme):
    """The README's flag tables as {"--flag": (default cell, meaning cell)}."""
    rows = {}
    for line in readme.splitlines():
        if not line.startswith("| `--"):
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        flag = re.match(r"`(--[a-z0-9-]+)", cells[0]).group(1)
        rows[flag] = (cells[1], cells[2])
    return rows


def _uncomment(line):
    """A line of ZON without its `//` comment (outside strings)."""
    quoted = False
    for i, c in enumerate(line):
        if c == '"' and (i == 0 or line[i - 1] != "\\"):
            quoted = not quoted
        elif not quoted and line.startswith("//", i):
            return line[:i]
    return line


_TOKEN = re.compile(r"""\s*(?:
    (?P<key>\.(?:@"[^"]*"|[A-Za-z_]\w*)\s*=(?!=))
  | (?P<open>\.\{)
  | (?P<close>\})
  | (?P<comma>,)
  | (?P<scalar>"(?:[^"\\]|\\.)*"|\.(?:@"[^"]*"|[A-Za-z_]\w*)|-?\d+|true|false)
)""", re.X)


def zon_keys(text):
    """Every key of a ZON example as {path: [(value as written, commented out)]}: `limits.
    header_bytes_max`, `pools.app.backends[].weight`. A line `// .key = value,` is read as a
    key that is commented out (a setting that is off by default, with an example)."""
    source, commented_lines = [], []
    for line in text.splitlines():
        m = re.match(r"^(\s*)// (\.[\w@\"]+ = .*)$", line)
        if m:
            line = m.group(1) + m.group(2)
        commented_lines.append(bool(m))
        source.append(_uncomment(line))
    tokens, offset = [], 0
    for number, line in enumerate(source):
        pos = 0
        while pos < len(line.rstrip()):
            m = _TOKEN.match(line, pos)
            assert m, f"cannot read line {number + 1}: {line!r}"
            kind = m.lastgroup
            tokens.append((kind, m.group(kind), offset + m.start(kind), offset + m.end(kind),
                           commented_lines[number]))
            pos = m.end()
        offset += len(line) + 1
    joined = "\n".join(source)
    found = {}

    def value(i, path, commented):
        kind, text_, start, end, _ = tokens[i]
        if kind == "scalar":
            found.setdefault(path, []).append((text_, commented))
            return i + 1
        assert kind == "open", (path, tokens[i])
        i += 1
        is_object = tokens[i][0] == "key"
        while tokens[i][0] != "close":
            if is_object:
                name = tokens[i][1][1:].rstrip("= ").strip()
                name = name[2:-1] if name.startswith('@"') else name
                child = f"{path}.{name}" if path else name
                i = value(i + 1, child, commented or tokens[i][4])
            else:
                i = value(i, f"{path}[]", commented)
            if tokens[i][0] == "comma":
                i += 1
        written = " ".join(joined[start:tokens[i][3]].split())
        if path:
            found.setdefault(path, []).append((written, commented))
        return i + 1

    end = value(0, "", False)
    assert end == len(tokens), tokens[end:]
    return found


def key_pattern(key):
    """`pools.NAME.timeouts.connect` as a pattern for paths such as `pools.app.timeouts.connect`."""
    return re.compile(re.escape(key).replace("NAME", r"[^.\[\]]+") + r"$")
