#!/usr/bin/env python3
"""Fails when a constant in src/tls/c.zig differs from the OpenSSL headers it was copied from.

src/tls/c.zig declares OpenSSL's API by hand (no @cImport: see its header comment), so a value
copied wrongly would compile and misbehave. This evaluates every `const NAME = VALUE;` there
whose NAME is also a macro of the installed headers (libssl-dev), asks a C program compiled
against those headers for the macro's value, and names each one that differs. `make unit`
runs it after tools/libssl.sh; usage: check_openssl_constants.py ZIG
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADERS = ["ssl.h", "err.h", "ocsp.h", "x509v3.h", "bio.h", "pem.h", "evp.h", "params.h"]
DECLARATION = re.compile(r"^(?:pub )?const ([A-Z][A-Za-z0-9_]+)(?:: [a-z0-9_]+)? = ([^;]+);", re.M)


def zig_values(source):
    values = {}
    for name, expression in DECLARATION.findall(source):
        if any(word in expression for word in ("opaque", "struct", "fn", "*const")):
            continue
        # Zig's integer syntax for these (hex, shifts, |, names defined above) is Python's.
        values[name] = eval(expression, {"__builtins__": {}}, dict(values))
    return values


def header_values(zig, names):
    lines = ["#include <stdio.h>"] + [f"#include <openssl/{h}>" for h in HEADERS]
    lines.append("int main(void) {")
    for name in names:
        lines.append(f'#ifdef {name}\n    printf("{name} %lld\\n", (long long)({name}));\n#endif')
    lines.append("    return 0;\n}")
    with tempfile.TemporaryDirectory() as folder:
        c_path = os.path.join(folder, "constants.c")
        exe = os.path.join(folder, "constants")
        with open(c_path, "w") as f:
            f.write("\n".join(lines))
        # musl's own headers first (as sluice is built), then the host's for <openssl/...>;
        # Debian keeps opensslconf.h under the multiarch folder.
        subprocess.run([zig, "cc", "-target", "native-linux-musl", "-idirafter",
                        "/usr/include/x86_64-linux-gnu", "-idirafter", "/usr/include", "-o", exe,
                        c_path], check=True)
        output = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    return {name: int(value) for name, value in (line.split() for line in output.splitlines())}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_openssl_constants.py ZIG")
    with open(os.path.join(ROOT, "src/tls/c.zig")) as f:
        ours = zig_values(f.read())
    theirs = header_values(sys.argv[1], sorted(ours))
    wrong = [n for n in sorted(theirs) if theirs[n] != ours[n]]
    for name in wrong:
        print(f"src/tls/c.zig: {name} is {ours[name]}, the headers say {theirs[name]}", file=sys.stderr)
    if wrong:
        sys.exit(1)
    if len(theirs) < len(ours) // 2:
        sys.exit(f"check_openssl_constants: only {len(theirs)} of {len(ours)} names found in the headers")


if __name__ == "__main__":
    main()
