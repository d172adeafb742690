"""A static scan of JavaScript source for constructs outside sluice's language subset.

sluice's engine (issue 12) implements a strict subset of modern JavaScript. The corpus, the
generator and the test262 selection must stay inside it, and this module is how they check:
a small tokenizer (strings, templates, comments, regex literals told from division by the
token before them) and a pass over the tokens with a little bracket context (block or object
literal, call or grouping parenthesis) that names every construct it finds.

Two kinds of finding:
- OUT: what issue 12 lists as out (each must be a compile error in sluice): var, with, eval,
  Function, classes, this, new on user functions, prototypes, getters/setters, generators,
  async/await, Promise, regular expressions, labels, Symbol, BigInt, Proxy, typed arrays.
- UNSURE: constructs the issue neither lists as in nor as out (the comma operator, bitwise
  operators, `**`, spread in call arguments, destructuring assignment, function
  expressions, method shorthand, delete/void, array holes, tagged templates, logical
  assignment, ...). The differential corpus avoids them and the test262 pass selection drops
  them, so a test never fails on a question the issue has not answered.

The scan is a heuristic, not a parser: it errs towards reporting (a false report only drops
a file from a selection). `scan(text)` returns a sorted list of feature names;
`out_features` / `unsure_features` split it. A tokenizer error (unterminated string, ...) is
reported as the feature "lex_error", which is neither OUT nor UNSURE (a file that does not
tokenize is a syntax error in any JavaScript); the tokens before the error are scanned too.
"""

from __future__ import annotations

import re
import sys

OUT = {
    "var", "with", "eval", "Function", "class", "this", "new_user", "prototype", "accessor",
    "generator", "async", "await", "Promise", "regex", "label", "Symbol", "BigInt", "Proxy",
    "typed_array", "super", "new_target", "import", "export_other", "private_name",
    "yield", "__proto__", "arguments", "Reflect", "html_comment", "builtin_out",
}
UNSURE = {
    "comma_operator", "bitwise", "exponent", "spread_call", "destructuring_assignment",
    "function_expression", "method", "delete", "void", "array_hole", "tagged_template",
    "logical_assignment", "debugger", "static", "escaped_keyword", "method_out",
    "typed_array_in",
}

# In the language since issue 25 (classes, `this`, `new` on functions, prototypes,
# accessors, property descriptors, call/apply/bind), with the constructs scripts about them
# need (method shorthand, function expressions, delete, the builtins' other methods): corpus
# scripts may use them. The test262 parser selection still leaves them out, so that its
# figures stay those of the first engine's subset.
IN_SINCE_25 = {
    "class", "this", "new_user", "prototype", "accessor", "super", "new_target", "static",
    "method", "method_out", "builtin_out", "function_expression", "delete", "private_name",
    "Symbol", "generator", "yield", "async", "await", "Promise", "regex", "var", "label",
    "tagged_template", "arguments",
    # `[a, b] = it` and `({ a } = o)`: docs/JS.md lists destructuring in assignments; UNSURE
    # still, so the test262 parser selection is unchanged.
    "destructuring_assignment",
    # ArrayBuffer, DataView and the nine typed arrays (not SharedArrayBuffer, BigInt64Array,
    # BigUint64Array, Atomics). UNSURE too, so the test262 parser selection is unchanged.
    "typed_array_in",
}


def corpus_features(text: str) -> list[str]:
    """What the scan finds in a corpus script that is still outside the language."""
    return [f for f in scan(text) if f not in IN_SINCE_25]


KEYWORDS = {
    "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete",
    "do", "else", "export", "extends", "finally", "for", "function", "if", "import", "in",
    "instanceof", "new", "return", "super", "switch", "this", "throw", "try", "typeof",
    "var", "void", "while", "with", "yield", "let", "static", "await", "async", "of",
    "null", "true", "false", "enum", "implements", "interface", "package", "private",
    "protected", "public",
}
# Tokens after which a `/` starts a regular expression rather than a division.
_REGEX_AFTER_KEYWORDS = {"return", "typeof", "case", "do", "else", "in", "of", "new",
                         "delete", "void", "throw", "instanceof", "yield", "await"}

NEW_OK = {"Map", "Set", "Error", "TypeError", "RangeError", "SyntaxError"}
TYPED_ARRAYS = {
    "BigInt64Array", "BigUint64Array", "SharedArrayBuffer", "Atomics",
}
TYPED_ARRAYS_IN = {
    "DataView",
    "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array",
    "Uint32Array", "Float32Array", "Float64Array", "ArrayBuffer",
}
OUT_IDENTIFIERS = {
    "eval": "eval", "Function": "Function", "Symbol": "Symbol", "BigInt": "BigInt",
    "Proxy": "Proxy", "Promise": "Promise", "prototype": "prototype",
    "__proto__": "__proto__", "arguments": "arguments", "Reflect": "Reflect",
    "RegExp": "regex", "WeakMap": "builtin_out", "WeakSet": "builtin_out",
    "WeakRef": "builtin_out", "globalThis": "builtin_out", "require": "builtin_out",
    "process": "builtin_out", "module": "builtin_out", "Intl": "builtin_out",
    "setTimeout": "builtin_out",
}
# Members of builtin namespaces that the subset has. `Global.member` with a member not
# listed here is "builtin_out".
GLOBAL_MEMBERS = {
    "Math": {"abs", "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt",
             "ceil", "clz32", "cos", "cosh", "exp", "expm1", "floor", "fround", "hypot",
             "imul", "log", "log10", "log1p", "log2", "max", "min", "pow", "random",
             "round", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc", "E", "LN10",
             "LN2", "LOG10E", "LOG2E", "PI", "SQRT1_2", "SQRT2"},
    "JSON": {"parse", "stringify"},
    "Object": {"keys", "values", "entries", "assign", "fromEntries", "freeze"},
    "Array": {"isArray", "from"},
    "Number": {"isInteger", "isFinite", "parseInt", "parseFloat"},
    "String": {"fromCharCode"},
    "Date": {"now"},
    "console": {"log"},
}
# Method names that builtins have but the subset does not list; `.name(` is "method_out".
METHODS_OUT = {
    "toString", "valueOf", "hasOwnProperty", "isPrototypeOf", "propertyIsEnumerable",
    "call", "apply", "bind", "toPrecision", "toExponential", "toLocaleString",
    "localeCompare", "normalize", "match", "matchAll", "search", "fill", "copyWithin",
    "findLast", "findLastIndex", "flatMap", "reduceRight", "toSorted", "toReversed",
    "toSpliced", "with", "codePoints", "anchor", "substr", "isWellFormed", "toWellFormed",
}

_PUNCTUATORS = sorted("""
>>>= ... === !== **= <<= >>= >>> &&= ||= ??= => == != <= >= && || ?? ?. ++ -- += -= *= /=
%= &= |= ^= ** << >> { } ( ) [ ] ; , < > + - * / % & | ^ ! ~ ? : = . @ #
""".split(), key=len, reverse=True)
_BITWISE = {"&", "|", "^", "~", "<<", ">>", ">>>", "&=", "|=", "^=", "<<=", ">>=", ">>>="}
_LINE_TERMINATORS = "\n\r\u2028\u2029"
_WHITESPACE = " \t\v\f\u00a0\ufeff\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007" \
    "\u2008\u2009\u200a\u202f\u205f\u3000"
_IDENT_RE = re.compile(r"(?:[A-Za-z0-9_$\u200c\u200d]|\\u\{[0-9A-Fa-f]+\}|\\u[0-9A-Fa-f]{4}"
                       r"|[^\x00-\x7f\s\u2028\u2029\ufeff\u00a0])+")
_NUMBER_RE = re.compile(
    r"(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)"
    r"(?:[eE][+-]?\d[\d_]*)?)n?")


class LexError(Exception):
    pass


class Token:
    __slots__ = ("kind", "value", "raw", "line", "newline_before")

    def __init__(self, kind, value, raw, line, newline_before):
        self.kind = kind  # "ident", "keyword", "num", "str", "template", "punct", "regex"
        self.value = value
        self.raw = raw
        self.line = line
        self.newline_before = newline_before

    def __repr__(self):
        return f"{self.kind}:{self.value!r}"


def _decode_ident(raw: str) -> str:
    def sub(m):
        h = m.group(1) or m.group(2)
        return chr(int(h, 16))
    return re.sub(r"\\u\{([0-9A-Fa-f]+)\}|\\u([0-9A-Fa-f]{4})", sub, raw)


def tokenize(src: str) -> tuple[list[Token], set[str]]:
    """Tokens of `src` and the lexical features seen (regex, html_comment, BigInt,
    escaped_keyword). Raises LexError on input that does not tokenize."""
    toks, feats, error = tokenize_partial(src)
    if error is not None:
        raise error
    return toks, feats


def tokenize_partial(src: str) -> tuple[list[Token], set[str], LexError | None]:
    """Like tokenize, but returns the tokens and features found before a lexical error
    together with that error."""
    toks: list[Token] = []
    feats: set[str] = set()
    try:
        _tokenize_into(src, toks, feats)
    except LexError as e:
        return toks, feats, e
    return toks, feats, None


def _tokenize_into(src: str, toks: list[Token], feats: set[str]):
    i, n, line = 0, len(src), 1
    newline = True
    # Each entry is "{" for an ordinary brace or "${" for a template substitution.
    braces: list[str] = []

    def regex_allowed() -> bool:
        if not toks:
            return True
        t = toks[-1]
        if t.kind in ("num", "str", "template", "regex"):
            return t.kind == "template" and t.value.endswith("${")
        if t.kind == "ident":
            return False
        if t.kind == "keyword":
            return t.value in _REGEX_AFTER_KEYWORDS
        return t.value not in (")", "]", "}")

    def read_template(j: int) -> tuple[int, str]:
        """From just after ` or }, up to and including ` or ${. Returns (end, tail)."""
        nonlocal line
        while j < n:
            c = src[j]
            if c == "\\":
                j += 2
                continue
            if c == "`":
                return j + 1, "`"
            if c == "$" and j + 1 < n and src[j + 1] == "{":
                return j + 2, "${"
            if c == "\n":
                line += 1
            j += 1
        raise LexError("unterminated template")

    while i < n:
        c = src[i]
        if c in _LINE_TERMINATORS:
            line += c == "\n"
            newline = True
            i += 1
            continue
        if c in _WHITESPACE:
            i += 1
            continue
        if src.startswith("//", i):
            while i < n and src[i] not in _LINE_TERMINATORS:
                i += 1
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            if j < 0:
                raise LexError("unterminated comment")
            body = src[i:j]
            if any(t in body for t in _LINE_TERMINATORS):
                newline = True
            line += body.count("\n")
            i = j + 2
            continue
        if src.startswith("<!--", i) or (newline and src.startswith("-->", i)):
            feats.add("html_comment")
            while i < n and src[i] not in _LINE_TERMINATORS:
                i += 1
            continue
        start = i
        if c in "'\"":
            j = i + 1
            while True:
                if j >= n or src[j] in "\n\r":
                    raise LexError("unterminated string")
                if src[j] == "\\":
                    if src.startswith("\r\n", j + 1):
                        j += 1
                    if src[j + 1:j + 2] == "\n":
                        line += 1
                    j += 2
                    continue
                if src[j] == c:
                    break
                j += 1
            i = j + 1
            toks.append(Token("str", src[start:i], src[start:i], line, newline))
        elif c == "`" or (c == "}" and braces and braces[-1] == "${"):
            if c == "}":
                braces.pop()
            i, tail = read_template(i + 1)
            if tail == "${":
                braces.append("${")
            kind_val = ("`" if c == "`" else "}") + "..." + tail
            toks.append(Token("template", kind_val, src[start:i], line, newline))
        elif c.isdigit() or (c == "." and i + 1 < n and src[i + 1].isdigit()):
            m = _NUMBER_RE.match(src, i)
            i = m.end()
            if m.group(0).endswith("n"):
                feats.add("BigInt")
            toks.append(Token("num", m.group(0), m.group(0), line, newline))
            if i < n and (src[i].isalnum() or src[i] in "_$"):
                raise LexError("identifier directly after a number")
        elif c == "/" and regex_allowed():
            feats.add("regex")
            j, in_class = i + 1, False
            while True:
                if j >= n or src[j] in _LINE_TERMINATORS:
                    raise LexError("unterminated regex")
                ch = src[j]
                if ch == "\\":
                    j += 2
                    continue
                if ch == "[":
                    in_class = True
                elif ch == "]":
                    in_class = False
                elif ch == "/" and not in_class:
                    break
                j += 1
            i = j + 1
            while i < n and (src[i].isalnum() or src[i] in "_$"):
                i += 1
            toks.append(Token("regex", src[start:i], src[start:i], line, newline))
        else:
            m = _IDENT_RE.match(src, i)
            if m and not c.isdigit():
                raw = m.group(0)
                i = m.end()
                name = _decode_ident(raw) if "\\" in raw else raw
                if "\\" in raw and name in KEYWORDS:
                    feats.add("escaped_keyword")
                kind = "keyword" if name in KEYWORDS and "\\" not in raw else "ident"
                toks.append(Token(kind, name, raw, line, newline))
            else:
                for p in _PUNCTUATORS:
                    if src.startswith(p, i):
                        if p == "?." and i + 2 < n and src[i + 2].isdigit():
                            continue
                        break
                else:
                    raise LexError(f"unexpected character {c!r}")
                i += len(p)
                if p == "{":
                    braces.append("{")
                elif p == "}":
                    if braces:
                        braces.pop()
                toks.append(Token("punct", p, p, line, newline))
        newline = False


# Tokens after which `{` opens an object literal (an expression is expected).
def _expression_expected(prev: Token | None) -> bool:
    if prev is None:
        return False
    if prev.kind == "punct":
        return prev.value not in (")", "]", "}", ";", "=>", "++", "--")
    if prev.kind == "keyword":
        return prev.value in ("return", "typeof", "case", "in", "of", "new", "delete", "void",
                              "throw", "instanceof", "yield", "await", "default_expr")
    if prev.kind == "template":
        return prev.value.endswith("${")
    return False


_STATEMENT_START_PREV = {";", "{", "}", ")", ":"}


class _Ctx:
    __slots__ = ("kind", "decl", "class_body", "field_key")

    def __init__(self, kind):
        # "block", "object", "array", "index", "call", "params", "group", "control"
        self.kind = kind
        self.decl = False  # within a let/const statement (block contexts)
        self.class_body = False  # a block that is a class's body
        self.field_key = False  # an array bracket that is a class element's computed key


def _class_head_before(toks, k) -> bool:
    """Whether the `{` at k opens a class body: `class`, a name, `extends` and a simple
    heritage before it, with no other bracket or statement end between."""
    j = k - 1
    while j >= 0 and toks[j].value not in (";", "{", "}", "(", ")", "=", "[", "]"):
        if toks[j].kind == "keyword" and toks[j].value == "class":
            return True
        j -= 1
    return False


def scan(src: str) -> list[str]:
    """Feature names found in `src` (see the module docstring), sorted."""
    toks, feats, error = tokenize_partial(src)
    if error is not None:
        feats.add("lex_error")  # the tokens before the error are still scanned
    stack: list[_Ctx] = [_Ctx("block")]
    # A statement-level record for the comma operator: does the current statement start
    # with let/const (a declaration list) or export?
    for k, t in enumerate(toks):
        prev = toks[k - 1] if k else None
        nxt = toks[k + 1] if k + 1 < len(toks) else None
        nxt2 = toks[k + 2] if k + 2 < len(toks) else None
        top = stack[-1]
        v = t.value
        if t.kind == "keyword" and prev is not None and (
                prev.value in (".", "?.") or (
                    top.kind == "object" and prev.value in ("{", ",")
                    and nxt is not None and nxt.value == ":")):
            continue  # a keyword used as a property name: `o.new`, `{ class: 1 }`
        if t.kind == "template":
            if v.startswith("`") and prev is not None and (
                    prev.kind in ("ident", "template", "str") and prev.kind != "str"
                    or (prev.kind == "punct" and prev.value in (")", "]"))):
                if not (prev.kind == "template" and not prev.value.endswith("`")):
                    feats.add("tagged_template")
            if v.endswith("${"):
                stack.append(_Ctx("group"))
            if v.startswith("}") and len(stack) > 1:
                stack.pop()
            continue
        if t.kind == "keyword":
            if v in ("var", "with", "class", "this", "super", "yield", "await", "async",
                     "import", "debugger", "delete", "void", "static"):
                if v == "async" and not (nxt and (nxt.kind in ("ident", "keyword")
                                                  or nxt.value in ("(", "function"))):
                    continue  # `async` as a plain name
                if v == "static" and top.kind != "object":
                    continue
                feats.add({"class": "class", "import": "import"}.get(v, v))
            if v == "function" and nxt is not None and nxt.value == "*":
                feats.add("generator")
            if v == "function" and prev is not None:
                ok_prev = (prev.kind == "punct" and prev.value in (";", "{", "}")) or (
                    prev.kind == "keyword" and prev.value in ("export", "default", "else"))
                if prev.value == "{" and top.kind != "block":
                    ok_prev = False
                if prev.value == ")" and top.kind == "block":
                    ok_prev = True  # `if (x) function f() {}`: node's strict scan decides
                if prev.value == ":" and top.kind == "block" and _in_case(toks, k):
                    ok_prev = True  # a declaration directly in a case clause
                if not ok_prev:
                    feats.add("function_expression")
            if v == "new":
                if nxt is not None and nxt.value == ".":
                    feats.add("new_target")
                elif not (nxt is not None and nxt.kind == "ident" and nxt.value in NEW_OK):
                    feats.add("new_user")
            if v == "export":
                ok = nxt is not None and (nxt.value == "function" or (
                    nxt.value == "default" and nxt2 is not None and nxt2.value == "function"))
                if not ok:
                    feats.add("export_other")
            if v in ("let", "const", "var") and top.kind in ("block", "control"):
                top.decl = True
        if t.kind == "ident":
            if v in OUT_IDENTIFIERS and not (prev is not None and prev.value in (".", "?.")):
                feats.add(OUT_IDENTIFIERS[v])
            elif v in ("prototype", "__proto__"):
                feats.add(v)
            if v in TYPED_ARRAYS and not (prev is not None and prev.value == "."):
                feats.add("typed_array")
            if v in TYPED_ARRAYS_IN and not (prev is not None and prev.value == "."):
                feats.add("typed_array_in")
            if v in GLOBAL_MEMBERS and nxt is not None and nxt.value in (".", "?.") and \
                    nxt2 is not None and not (prev is not None and prev.value in (".", "?.")):
                if nxt2.value not in GLOBAL_MEMBERS[v]:
                    feats.add("builtin_out")
            if prev is not None and prev.value in (".", "?.") and v in METHODS_OUT and \
                    nxt is not None and nxt.value == "(":
                feats.add("method_out")
            # get/set accessors in object literals.
            if v in ("get", "set") and top.kind == "object" and prev is not None and \
                    prev.value in ("{", ",") and nxt is not None and (
                        nxt.kind in ("ident", "keyword", "str", "num") or nxt.value == "["):
                feats.add("accessor")
        if t.kind in ("ident", "keyword") and nxt is not None and nxt.value == ":" and (
                t.kind == "ident" or v in ("yield", "await", "let", "async", "of")):
            if top.kind == "block" and (prev is None or prev.value in _STATEMENT_START_PREV
                                        or (prev.kind == "keyword"
                                            and prev.value in ("else", "do"))):
                if not (prev is not None and prev.value == ":" and _in_case(toks, k)):
                    feats.add("label")
        # `"__proto__": value` sets the prototype just as `__proto__: value` does.
        if t.kind == "str" and v[1:-1] == "__proto__" and top.kind == "object" and \
                prev is not None and prev.value in ("{", ",") and nxt is not None and \
                nxt.value == ":":
            feats.add("__proto__")
        # Method shorthand: a property key directly followed by `(` in an object literal.
        if top.kind == "object" and nxt is not None and nxt.value == "(" and prev is not None \
                and prev.value in ("{", ",", "*") and (
                    t.kind in ("ident", "keyword", "str", "num")):
            feats.add("method")
        if t.kind != "punct":
            continue
        if v == "#":
            feats.add("private_name")
        if v in _BITWISE:
            feats.add("bitwise")
        if v in ("**", "**="):
            feats.add("exponent")
        if v in ("&&=", "||=", "??="):
            feats.add("logical_assignment")
        if v == "..." and top.kind == "call":
            feats.add("spread_call")
        if v == "," and top.kind in ("block", "control", "group") and not top.decl:
            feats.add("comma_operator")
        if v == "," and top.kind == "array" and prev is not None and prev.value in ("[", ","):
            feats.add("array_hole")
        if v == ";" and top.kind in ("block", "control"):
            top.decl = False
        if v in ("{", "(", "["):
            if v == "{":
                if top.kind == "object" and prev is not None and prev.value == ":":
                    kind = "object"
                elif prev is not None and prev.kind == "keyword" and prev.value in (
                        "let", "const", "var"):
                    kind = "object"  # a destructuring pattern
                elif prev is not None and prev.value == "{" and top.kind == "block":
                    kind = "block"  # a block directly inside a block: `{{}`
                elif prev is not None and prev.value == ":" and top.kind == "block" and (
                        _in_case(toks, k) or _label_before(toks, k)):
                    kind = "block"  # `case 1: {}`, `label: {}`
                elif prev is not None and prev.kind == "keyword" and k >= 2 and \
                        toks[k - 2].value in (".", "?."):
                    kind = "block"  # `a.in {`: a property name, then (after ASI) a block
                elif prev is not None and prev.value == "return" and t.newline_before:
                    kind = "block"  # `return` then a line break ends the statement (ASI)
                elif _expression_expected(prev):
                    kind = "object"
                else:
                    kind = "block"
            elif v == "(":
                before = toks[k - 2] if k >= 2 else None
                if prev is not None and (prev.value == "function" or (
                        prev.kind == "ident" and before is not None
                        and before.value == "function")):
                    kind = "params"
                elif prev is not None and (prev.kind == "ident" or prev.value in (")", "]")
                                         or (prev.kind == "template"
                                             and prev.value.endswith("`"))
                                         or prev.value == "?."):
                    kind = "call"
                elif prev is not None and prev.kind == "keyword" and prev.value in (
                        "if", "while", "for", "switch", "catch", "with", "function"):
                    kind = "control"
                elif prev is not None and prev.kind == "keyword" and prev.value not in (
                        "return", "typeof", "case", "in", "of", "new", "delete", "void",
                        "throw", "instanceof", "yield", "await", "else", "do"):
                    kind = "call"  # `function f(` and similar
                else:
                    kind = "group"
            else:
                if prev is not None and (prev.kind in ("ident", "str", "num", "template")
                                         or prev.value in (")", "]", "?.")
                                         or (prev.kind == "keyword"
                                             and prev.value in ("this", "super"))):
                    kind = "index"
                else:
                    kind = "array"
            ctx = _Ctx(kind)
            if v == "{" and kind == "block" and _class_head_before(toks, k):
                ctx.class_body = True
            if v == "[" and kind == "array" and top.class_body and prev is not None and (
                    prev.value in (";", "{", "}", "static")):
                ctx.field_key = True  # `class A { [k] = 1 }`: a computed field name
            if kind == "control":
                ctx.decl = False
            stack.append(ctx)
            if kind == "group" and _arrow_follows(toks, k):
                ctx.kind = "params"  # arrow parameters: commas and `...` are fine
            continue
        if v in ("}", ")", "]"):
            closed = stack.pop() if len(stack) > 1 else stack[0]
            if v in ("]", "}") and closed.kind in ("array", "object") and nxt is not None \
                    and nxt.value == "=" and not _in_binding_pattern(stack) \
                    and not closed.field_key:
                feats.add("destructuring_assignment")
            if v == "]" and stack[-1].kind == "object" and nxt is not None \
                    and nxt.value == "(":
                feats.add("method")
            if v in ("}", ")") and closed.kind in ("block", "control") and nxt is not None \
                    and nxt.kind == "punct" and nxt.value in ("/", "/=") and not (
                        v == ")" and _is_call_head(toks, k)):
                # After a block, or after the head of `if (...)`, `while (...)` or `for (...)`,
                # `/` starts a regex that the tokenizer took for division.
                feats.add("regex")
            if v == "}" and closed.kind == "block" and stack[-1].kind in ("block",):
                stack[-1].decl = False
    return sorted(feats)


def _in_binding_pattern(stack: list[_Ctx]) -> bool:
    """Whether a pattern closing at the top of `stack` is a binding (a declaration or a
    parameter) rather than the target of an assignment: look through the enclosing array
    and object literals to the first context that is neither."""
    for ctx in reversed(stack):
        if ctx.kind in ("array", "object"):
            continue
        return ctx.kind == "params" or ctx.decl
    return False


def _in_case(toks: list[Token], k: int) -> bool:
    """Whether the `:` before toks[k] ends a `case ...:` or `default:` clause."""
    depth = 0
    for j in range(k - 2, max(-1, k - 40), -1):
        t = toks[j]
        if t.value in (")", "]", "}"):
            depth += 1
        elif t.value in ("(", "[", "{"):
            if depth == 0:
                return False
            depth -= 1
        elif depth == 0 and t.kind == "keyword" and t.value in ("case", "default"):
            return True
        elif depth == 0 and t.value in (";",):
            return False
    return False


def _label_before(toks: list[Token], k: int) -> bool:
    """Whether the `:` before toks[k] ends a label (`name:` at the start of a statement)."""
    if k < 2 or toks[k - 2].kind != "ident":
        return False
    before = toks[k - 3] if k >= 3 else None
    return before is None or before.value in _STATEMENT_START_PREV


def _is_call_head(toks: list[Token], k: int) -> bool:
    """Whether the `)` at toks[k] closes the parentheses of `switch (...)` or `catch (...)`
    or a function's parameters (a `{` follows those, never a regex)."""
    depth = 0
    for j in range(k, -1, -1):
        v = toks[j].value
        if toks[j].kind == "punct" and v == ")":
            depth += 1
        elif toks[j].kind == "punct" and v == "(":
            depth -= 1
            if depth == 0:
                return j > 0 and toks[j - 1].value in ("switch", "catch", "function")
    return False


def _arrow_follows(toks: list[Token], k: int) -> bool:
    """Whether the `(` at toks[k] opens arrow-function parameters."""
    depth = 0
    for j in range(k, len(toks)):
        v = toks[j].value
        if toks[j].kind == "punct" and v in ("(", "[", "{"):
            depth += 1
        elif toks[j].kind == "punct" and v in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return j + 1 < len(toks) and toks[j + 1].value == "=>"
        elif toks[j].kind == "template":
            if v.endswith("${"):
                depth += 1
            if v.startswith("}"):
                depth -= 1
    return False


def out_features(features) -> list[str]:
    return [f for f in features if f in OUT]


def unsure_features(features) -> list[str]:
    return [f for f in features if f in UNSURE]


def main(argv: list[str]) -> int:
    """`python3 test/js/subset.py FILE...`: print each file's features."""
    status = 0
    for path in argv:
        with open(path, encoding="utf-8") as f:
            found = scan(f.read())
        print(f"{path}: {' '.join(found) if found else 'inside the subset'}")
        status |= bool(found)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
