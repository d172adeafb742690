"""A seeded generator of random programs inside sluice's JavaScript subset.

    python3 test/js/gen.py --seed N            print program N
    python3 test/js/gen.py --seed N --out F    write it to F

The same seed gives the same program, byte for byte (random.Random(seed), no other input).
Every program terminates: loops run a literal number of times (at most 6) or count a
fresh counter up to such a number, nesting is bounded, recursion only counts down, and
strings and arrays are cut after every growth. Every program exits 0 and prints its results
with console.log and JSON.stringify: operations that may throw (JSON.parse of arbitrary
text, explicit throws, reading a property of undefined, toFixed with a bad digit count)
only appear inside try/catch, whose catch prints the error's name and message.

The program is built from typed pieces: numbers, strings, booleans, arrays of numbers,
arrays of strings, plain objects with known keys, Maps and Sets, and closures from number to
number. Each statement generator declares, updates or prints values of those types, so
every expression is well typed and the interesting part is how the engine computes and
formats the results.
"""

from __future__ import annotations

import argparse
import json
import random
import sys

NUM_LITERALS = ["0", "-0", "1", "-1", "2", "3", "7", "10", "0.1", "0.2", "0.5", "1.5", "-2.5",
                "100", "255", "1e21", "1e-7", "123.456", "2147483648", "9007199254740993",
                "(0 / 0)", "(1 / 0)", "(-1 / 0)", "0.3", "1e-6", "4.35", "1.005", "33",
                "1000000", "-7"]
STR_LITERALS = ["", "a", "abc", "Hello", "é", "日本", "😀", "a,b,c", " x ", "0", "12px", "-3.5",
                "\\n", "it's", "say \"hi\"", "tab\\there", "\\u00e9t\\u00e9", "a😀b", "%",
                "1e3", "  42  ", "0x1f", "null", "true", "ß", "İ", "\\ud83d", "x-y-z", "AbC"]
KEYS = ["a", "b", "c", "name", "id", "1", "10", "2", "z", "x_y", "é", "a b", "0"]
SMALL_INTS = ["0", "1", "2", "3", "-1", "-2", "5"]
ERROR_TYPES = ["Error", "TypeError", "RangeError", "SyntaxError"]
JSON_TEXTS = ['{"a":1}', "[1,2,", "{", '"s"', "1e400", '{"a":}', "[]", "nul", "-0",
              '{"b":[1,{"c":null}]}', "01", '"\\\\u00e9"', "tru", " 7 ", "[1,]"]


def js_str(s: str) -> str:
    """A double-quoted JS string literal for `s`, whose escapes are already JS escapes."""
    return '"' + s.replace('"', '\\"') + '"' if '\\"' not in s else '"' + s + '"'


class Gen:
    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.lines: list[str] = []
        self.indent = 0
        self.counter = 0
        # name -> type, per scope level; "const" names cannot be assigned.
        self.scopes: list[dict[str, str]] = [{}]
        self.consts: set[str] = set()
        self.loop_depth = 0
        self.block_depth = 0
        self.labels = 0

    # -- plumbing --

    def emit(self, line: str):
        self.lines.append("  " * self.indent + line)

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def declare(self, name: str, ty: str, const: bool = False):
        self.scopes[-1][name] = ty
        if const:
            self.consts.add(name)

    def vars_of(self, ty: str, assignable: bool = False) -> list[str]:
        seen = {}
        for scope in self.scopes:
            seen.update(scope)
        return [n for n, t in seen.items() if t == ty and not (assignable and n in self.consts)]

    def push_scope(self):
        self.scopes.append({})

    def pop_scope(self):
        self.scopes.pop()

    def choice(self, xs):
        return self.r.choice(xs)

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    # -- expressions, by type; depth bounds the size --

    def num(self, d: int = 2) -> str:
        vs = self.vars_of("num")
        if d <= 0 or self.chance(0.25):
            if vs and self.chance(0.6):
                return self.choice(vs)
            return self.choice(NUM_LITERALS)
        k = self.r.randrange(14)
        if k == 0:
            return f"({self.num(d - 1)} {self.choice(['+', '-', '*', '/', '%'])} {self.num(d - 1)})"
        if k == 1:
            return f"(-({self.num(d - 1)}))"
        if k == 2:
            fn = self.choice(["floor", "ceil", "round", "trunc", "abs", "sign", "sqrt"])
            return f"Math.{fn}({self.num(d - 1)})"
        if k == 3:
            return f"Math.{self.choice(['min', 'max'])}({self.num(d - 1)}, {self.num(d - 1)})"
        if k == 4:
            return f"{self.str(d - 1)}.length"
        if k == 5:
            return f"{self.arrn(d - 1)}.length"
        if k == 6:
            return f"{self.str(d - 1)}.indexOf({self.str(0)})"
        if k == 7:
            return f"Number.{self.choice(['parseInt', 'parseFloat'])}({self.str(d - 1)})"
        if k == 8:
            return f"({self.bool(d - 1)} ? {self.num(d - 1)} : {self.num(d - 1)})"
        if k == 9:
            fs = self.vars_of("fn")
            if fs:
                return f"{self.choice(fs)}({self.num(d - 1)})"
            return f"Math.pow({self.num(0)}, {self.choice(SMALL_INTS)})"
        if k == 10:
            return f"{self.arrn(d - 1)}.reduce((acc, v) => acc + v, 0)"
        if k == 11:
            ms = self.vars_of("map") + self.vars_of("set")
            if ms:
                return f"{self.choice(ms)}.size"
            return f"{self.str(d - 1)}.charCodeAt({self.choice(SMALL_INTS)})"
        if k == 12:
            return f"Number.parseInt({self.str(d - 1)}, {self.choice(['2', '8', '10', '16', '36'])})"
        return f"(+{self.str(d - 1)})"

    def str(self, d: int = 2) -> str:
        vs = self.vars_of("str")
        if d <= 0 or self.chance(0.25):
            if vs and self.chance(0.6):
                return self.choice(vs)
            return js_str(self.choice(STR_LITERALS))
        k = self.r.randrange(16)
        if k == 0:
            return f"({self.str(d - 1)} + {self.str(d - 1)})"
        if k == 1:
            return f"`{self.choice(['', 'v=', '<'])}${{{self.any_value(d - 1)}}}{self.choice(['', '>', '|'])}`"
        if k == 2:
            return f"{self.str(d - 1)}.slice({self.choice(SMALL_INTS)}, {self.choice(SMALL_INTS + ['undefined'])})"
        if k == 3:
            return f"{self.str(d - 1)}.{self.choice(['toUpperCase', 'toLowerCase', 'trim', 'trimStart', 'trimEnd'])}()"
        if k == 4:
            return f"{self.str(d - 1)}.padStart({self.choice(['3', '6', '9'])}, {js_str(self.choice(['*', '0', 'ab', ' ']))})"
        if k == 5:
            return f"{self.str(d - 1)}.repeat({self.choice(['0', '1', '2', '3'])})"
        if k == 6:
            return f"{self.str(d - 1)}.{self.choice(['replace', 'replaceAll'])}({js_str(self.choice(['a', 'b', ',', 'é', 'x']))}, {js_str(self.choice(['', '-', '$&', 'ZZ']))})"
        if k == 7:
            return f"String({self.num(d - 1)})"
        if k == 8:
            return f"(JSON.stringify({self.any_value(d - 1)}) ?? \"no json\")"
        if k == 9:
            return f"{self.arrs(d - 1)}.join({js_str(self.choice(['', ',', ' - ', '|']))})"
        if k == 10:
            return f"({self.num(d - 1)}).toFixed({self.choice(['0', '1', '2', '5'])})"
        if k == 11:
            return f"({self.str(d - 1)}.at({self.choice(SMALL_INTS)}) ?? \"none\")"
        if k == 12:
            return f"{self.str(d - 1)}.charAt({self.choice(SMALL_INTS)})"
        if k == 13:
            return f"{self.str(d - 1)}.padEnd({self.choice(['4', '8'])}, \".\")"
        if k == 14:
            return f"encodeURIComponent({js_str(self.choice(['a b', 'é&=', '日本', '😀/?', '']))})"
        return f"String.fromCharCode({self.choice(['65', '233', '0x4e2d', '97 + 1'])})"

    def bool(self, d: int = 2) -> str:
        if d <= 0 or self.chance(0.2):
            vs = self.vars_of("bool")
            if vs and self.chance(0.5):
                return self.choice(vs)
            return self.choice(["true", "false"])
        k = self.r.randrange(10)
        if k == 0:
            return f"({self.num(d - 1)} {self.choice(['<', '<=', '>', '>=', '===', '!=='])} {self.num(d - 1)})"
        if k == 1:
            return f"({self.str(d - 1)} {self.choice(['===', '!==', '<', '>'])} {self.str(d - 1)})"
        if k == 2:
            return f"({self.num(d - 1)} {self.choice(['==', '!='])} {self.str(d - 1)})"
        if k == 3:
            return f"{self.str(d - 1)}.{self.choice(['includes', 'startsWith', 'endsWith'])}({self.str(0)})"
        if k == 4:
            return f"!{self.bool(d - 1)}"
        if k == 5:
            return f"({self.bool(d - 1)} {self.choice(['&&', '||'])} {self.bool(d - 1)})"
        if k == 6:
            return f"Number.{self.choice(['isInteger', 'isFinite'])}({self.num(d - 1)})"
        if k == 7:
            return f"{self.arrn(d - 1)}.includes({self.num(0)})"
        if k == 8:
            objs = self.vars_of("obj")
            if objs:
                return f"({js_str(self.choice(KEYS))} in {self.choice(objs)})"
            return f"Array.isArray({self.arrn(d - 1)})"
        return f"(typeof {self.any_value(d - 1)} === {js_str(self.choice(['number', 'string', 'object', 'boolean', 'undefined']))})"

    def arrn(self, d: int = 2) -> str:
        vs = self.vars_of("arrn")
        if d <= 0 or self.chance(0.3):
            if vs and self.chance(0.6):
                return self.choice(vs)
            n = self.r.randrange(0, 5)
            return "[" + ", ".join(self.num(0) for _ in range(n)) + "]"
        k = self.r.randrange(9)
        if k == 0:
            return f"{self.arrn(d - 1)}.map((v, i) => {self.num_with(['v', 'i'], d - 1)})"
        if k == 1:
            return f"{self.arrn(d - 1)}.filter((v) => {self.bool_with_v(d - 1)})"
        if k == 2:
            return f"{self.arrn(d - 1)}.slice({self.choice(SMALL_INTS)})"
        if k == 3:
            return f"{self.arrn(d - 1)}.concat({self.arrn(d - 1)}).slice(0, 12)"
        if k == 4:
            return f"[...{self.arrn(d - 1)}].sort((p, q) => p - q)"
        if k == 5:
            return f"[...{self.arrn(d - 1)}, {self.num(d - 1)}]"
        if k == 6:
            return f"[...{self.arrn(d - 1)}].reverse()"
        if k == 7:
            return f"[{self.arrn(d - 1)}, [{self.num(0)}]].flat()"
        return f"Array.from(new Set({self.arrn(d - 1)}))"

    def arrs(self, d: int = 2) -> str:
        vs = self.vars_of("arrs")
        if d <= 0 or self.chance(0.3):
            if vs and self.chance(0.6):
                return self.choice(vs)
            n = self.r.randrange(0, 5)
            return "[" + ", ".join(self.str(0) for _ in range(n)) + "]"
        k = self.r.randrange(7)
        if k == 0:
            return f"{self.str(d - 1)}.split({js_str(self.choice(['', ',', 'a', ' ', '😀']))})"
        if k == 1:
            return f"{self.arrs(d - 1)}.map((s) => {self.str_with_s(d - 1)})"
        if k == 2:
            return f"[...{self.arrs(d - 1)}].sort()"
        if k == 3:
            return f"Object.keys({self.obj(d - 1)})"
        if k == 4:
            return f"{self.arrn(d - 1)}.map(String)"
        if k == 5:
            return f"Array.from({self.str(d - 1)})"
        return f"{self.arrs(d - 1)}.filter((s) => s.length {self.choice(['>', '<', '==='])} {self.choice(['0', '1', '3'])})"

    def obj(self, d: int = 2) -> str:
        vs = self.vars_of("obj")
        if d <= 0 or self.chance(0.3):
            if vs and self.chance(0.6):
                return self.choice(vs)
        k = self.r.randrange(5)
        if k == 0 and vs:
            return f"{{ ...{self.choice(vs)}, {self.prop(d - 1)} }}"
        if k == 1 and vs:
            return f"JSON.parse(JSON.stringify({self.choice(vs)}))"
        if k == 2 and vs:
            return f"Object.fromEntries(Object.entries({self.choice(vs)}).reverse())"
        n = self.r.randrange(0, 4)
        return "{ " + ", ".join(self.prop(d - 1) for _ in range(n)) + " }" if n else "{}"

    def prop(self, d: int) -> str:
        key = self.choice(KEYS)
        k = key if key.isidentifier() else js_str(key)
        if self.chance(0.15):
            k = f"[{js_str(key)} + {js_str(self.choice(['', '_x']))}]"
        return f"{k}: {self.any_value(max(d, 0))}"

    def any_value(self, d: int = 1) -> str:
        k = self.r.randrange(9)
        if k < 3:
            return self.num(d)
        if k < 5:
            return self.str(d)
        if k == 5:
            return self.bool(d)
        if k == 6:
            return self.arrn(d)
        if k == 7:
            return self.arrs(d)
        return self.obj(d) if d > 0 else self.choice(["null", "undefined", "{}"])

    def num_with(self, names: list[str], d: int) -> str:
        self.push_scope()
        for n in names:
            self.declare(n, "num", const=True)
        e = self.num(d)
        self.pop_scope()
        return e

    def bool_with_v(self, d: int) -> str:
        self.push_scope()
        self.declare("v", "num", const=True)
        e = self.bool(d)
        self.pop_scope()
        return e

    def str_with_s(self, d: int) -> str:
        self.push_scope()
        self.declare("s", "str", const=True)
        e = self.str(d)
        self.pop_scope()
        return e

    # -- statements --

    def print_stmt(self):
        label = self.fresh("p")
        k = self.r.randrange(6)
        if k == 0:
            self.emit(f"console.log({js_str(label)}, {self.any_value(2)});")
        elif k == 1:
            self.emit(f"console.log({js_str(label)}, JSON.stringify({self.any_value(2)}));")
        elif k == 2:
            v = self.any_value(2)
            indent = self.choice(["2", "\"\\t\"", "0", "4"])
            self.emit(f"console.log(JSON.stringify({v}, null, {indent}));")
        elif k == 3:
            ms = self.vars_of("map") + self.vars_of("set")
            if ms:
                self.emit(f"console.log({js_str(label)}, {self.choice(ms)});")
            else:
                self.emit(f"console.log({js_str(label)}, {self.num(2)}, {self.str(1)});")
        elif k == 4:
            self.emit(f"console.log({js_str(label)}, {self.num(3)});")
        else:
            self.emit(f"console.log({js_str(label)}, [{self.num(1)}, {self.str(1)}, {self.bool(1)}]);")

    def declare_stmt(self):
        ty = self.choice(["num", "num", "str", "str", "bool", "arrn", "arrs", "obj", "map", "set"])
        kind = self.choice(["let", "const"])
        name = self.fresh({"num": "n", "str": "s", "bool": "b", "arrn": "an", "arrs": "as",
                           "obj": "o", "map": "m", "set": "st"}[ty])
        if ty == "map":
            pairs = ", ".join(f"[{self.str(0)}, {self.num(0)}]" for _ in range(self.r.randrange(4)))
            expr = f"new Map([{pairs}])"
            kind = "const"
        elif ty == "set":
            expr = f"new Set({self.choice([self.arrn(1), self.arrs(1)])})"
            kind = "const"
        else:
            expr = getattr(self, {"num": "num", "str": "str", "bool": "bool", "arrn": "arrn",
                                  "arrs": "arrs", "obj": "obj"}[ty])(2)
            if ty == "str":
                expr = f"({expr}).slice(0, 40)"
        self.emit(f"{kind} {name} = {expr};")
        self.declare(name, ty, const=(kind == "const"))

    def assign_stmt(self):
        ty = self.choice(["num", "str", "arrn", "obj", "bool"])
        vs = self.vars_of(ty, assignable=True)
        if not vs:
            return self.declare_stmt()
        v = self.choice(vs)
        if ty == "num":
            op = self.choice(["=", "+=", "-=", "*=", "/=", "%="])
            self.emit(f"{v} {op} {self.num(2)};")
            if self.chance(0.3):
                self.emit(f"{v}{self.choice(['++', '--'])};")
        elif ty == "str":
            op = self.choice(["=", "+="])
            self.emit(f"{v} {op} {self.str(2)};")
            self.emit(f"{v} = {v}.slice(0, 40);")
        elif ty == "arrn":
            self.emit(f"{v} = {self.arrn(2)}.slice(0, 20);")
        elif ty == "bool":
            self.emit(f"{v} = {self.bool(2)};")
        else:
            self.emit(f"{v} = {self.obj(2)};")

    def mutate_stmt(self):
        k = self.r.randrange(5)
        arrs = self.vars_of("arrn")
        objs = self.vars_of("obj")
        maps = self.vars_of("map")
        sets = self.vars_of("set")
        if k == 0 and arrs:
            a = self.choice(arrs)
            op = self.choice(["push", "unshift"])
            self.emit(f"if ({a}.length < 20) {a}.{op}({self.num(1)});")
            if self.chance(0.5):
                self.emit(f"console.log({js_str(self.fresh('pop'))}, {a}.{self.choice(['pop', 'shift'])}(), {a});")
        elif k == 1 and objs:
            o = self.choice(objs)
            key = self.choice(KEYS)
            # No object values here: assigning one could close a cycle.
            value = self.choice([self.num, self.str, self.bool, self.arrn, self.arrs])(1)
            self.emit(f"{o}[{js_str(key)}] = {value};")
        elif k == 2 and maps:
            m = self.choice(maps)
            self.emit(f"{m}.set({self.str(1)}, {self.num(1)});")
            if self.chance(0.4):
                self.emit(f"{m}.delete({self.str(0)});")
            self.emit(f"console.log({js_str(self.fresh('mget'))}, {m}.get({self.str(0)}), {m}.has({self.str(0)}));")
        elif k == 3 and sets:
            s = self.choice(sets)
            self.emit(f"{s}.add({self.choice([self.num(1), self.str(1)])});")
            self.emit(f"console.log({js_str(self.fresh('set'))}, {s}.has({self.num(0)}), [...{s}].length);")
        elif k == 4 and arrs:
            a = self.choice(arrs)
            self.emit(f"console.log({js_str(self.fresh('splice'))}, {a}.splice({self.choice(SMALL_INTS)}, {self.choice(['0', '1', '2'])}), {a});")
        else:
            self.print_stmt()

    def block(self, n: int, loop: bool = False):
        self.push_scope()
        self.indent += 1
        self.block_depth += 1
        if loop:
            self.loop_depth += 1
        for _ in range(n):
            self.stmt()
        if loop:
            self.loop_depth -= 1
        self.block_depth -= 1
        self.indent -= 1
        self.pop_scope()

    def if_stmt(self):
        self.emit(f"if ({self.bool(2)}) {{")
        self.block(self.r.randrange(1, 3))
        if self.chance(0.6):
            self.emit("} else {")
            self.block(self.r.randrange(1, 3))
        self.emit("}")

    def for_stmt(self):
        i = self.fresh("i")
        count = self.r.randrange(1, 6)
        self.emit(f"for (let {i} = 0; {i} < {count}; {i}++) {{")
        self.push_scope()
        self.declare(i, "num", const=True)
        self.block(self.r.randrange(1, 3), loop=True)
        self.pop_scope()
        self.emit("}")

    def for_of_stmt(self):
        x = self.fresh("x")
        ty = self.choice(["arrn", "arrs", "str"])
        src = {"arrn": self.arrn, "arrs": self.arrs, "str": self.str}[ty](1)
        if ty != "str":
            src = f"{src}.slice(0, 6)"
        else:
            src = f"({src}).slice(0, 6)"
        self.emit(f"for (const {x} of {src}) {{")
        self.push_scope()
        self.declare(x, "num" if ty == "arrn" else "str", const=True)
        self.block(self.r.randrange(1, 3), loop=True)
        self.pop_scope()
        self.emit("}")

    def for_in_stmt(self):
        k = self.fresh("k")
        self.emit(f"for (const {k} in {self.obj(1)}) {{")
        self.push_scope()
        self.declare(k, "str", const=True)
        self.block(self.r.randrange(1, 3), loop=True)
        self.pop_scope()
        self.emit("}")

    def while_stmt(self):
        w = self.fresh("w")
        limit = self.r.randrange(1, 5)
        self.emit(f"let {w} = 0;")
        do = self.chance(0.4)
        self.emit("do {" if do else f"while ({w} < {limit}) {{")
        self.indent += 1
        self.emit(f"{w}++;")  # first, so a continue cannot skip it
        self.indent -= 1
        self.push_scope()
        self.declare(w, "num", const=True)
        self.block(self.r.randrange(1, 3), loop=True)
        self.pop_scope()
        self.emit(f"}} while ({w} < {limit});" if do else "}")

    def switch_stmt(self):
        self.emit(f"switch (Math.abs(Math.trunc({self.num(1)})) % 4) {{")
        for case in self.r.sample(["0", "1", "2", "3"], self.r.randrange(1, 4)):
            self.emit(f"  case {case}:")
            self.indent += 1
            self.block(1)
            if self.chance(0.7):
                self.emit("  break;")
            self.indent -= 1
        if self.chance(0.6):
            self.emit("  default:")
            self.indent += 1
            self.block(1)
            self.indent -= 1
        self.emit("}")

    def loop_control_stmt(self):
        if self.loop_depth == 0:
            return self.print_stmt()
        self.emit(f"if ({self.bool(1)}) {self.choice(['break', 'continue'])};")

    def function_stmt(self):
        f = self.fresh("f")
        captured = self.vars_of("num")
        body = self.num_with(["x"] + ([] if not captured else []), 3)
        if self.chance(0.5):
            self.emit(f"function {f}(x) {{")
            self.indent += 1
            self.emit(f"return {body};")
            self.indent -= 1
            self.emit("}")
        else:
            self.emit(f"const {f} = (x) => {body};")
            self.consts.add(f)
        self.declare(f, "fn", const=True)
        self.emit(f"console.log({js_str(self.fresh('call'))}, {f}({self.num(1)}), {f}({self.num(0)}));")

    def closures_stmt(self):
        fs = self.fresh("fs")
        count = self.r.randrange(1, 5)
        self.emit(f"const {fs} = [];")
        i = self.fresh("i")
        self.emit(f"for (let {i} = 0; {i} < {count}; {i}++) {{")
        self.indent += 1
        self.push_scope()
        self.declare(i, "num", const=True)
        self.emit(f"{fs}.push(() => {self.num_with([], 2)} + {i});")
        self.pop_scope()
        self.indent -= 1
        self.emit("}")
        self.emit(f"console.log({js_str(self.fresh('closures'))}, {fs}.map((g) => g()));")

    def counter_stmt(self):
        mk = self.fresh("makeCounter")
        c = self.fresh("c")
        step = self.num(1)
        self.emit(f"function {mk}(start) {{")
        self.emit(f"  let value = start;")
        self.emit(f"  return () => {{")
        self.emit(f"    value += {step};")
        self.emit(f"    return value;")
        self.emit(f"  }};")
        self.emit("}")
        self.emit(f"const {c} = {mk}({self.num(0)});")
        self.emit(f"console.log({js_str(self.fresh('counter'))}, {c}(), {c}(), {c}());")

    def recursion_stmt(self):
        f = self.fresh("rec")
        self.emit(f"function {f}(n, acc) {{")
        self.emit(f"  if (n <= 0) return acc;")
        self.emit(f"  return {f}(n - 1, {self.choice(['acc + n', 'acc * 2', 'acc + String(n)', '[n].concat(acc).slice(0, 8)'])});")
        self.emit("}")
        start = self.choice(["0", "1", '""', "[]"])
        self.emit(f"console.log({js_str(self.fresh('rec'))}, {f}({self.r.randrange(0, 8)}, {start}));")

    def throwing_expr(self) -> str:
        k = self.r.randrange(7)
        if k == 0:
            return f"JSON.parse({js_str(self.choice(JSON_TEXTS))})"
        if k == 1:
            return f"({self.num(1)}).toFixed({self.choice(['2', '101', '-1', '20'])})"
        if k == 2:
            return f"{self.str(1)}.repeat({self.choice(['2', '-1', '1 / 0'])})"
        if k == 3:
            o = self.fresh("maybe")
            self.emit(f"const {o} = {self.choice(['undefined', 'null', '{ inner: { v: 1 } }', '{ inner: null }'])};")
            return f"{o}.inner.v"
        if k == 5 and self.chance(0.5):
            return f"encodeURIComponent({self.str(1)})"  # throws on a lone surrogate
        if k == 4:
            return f"decodeURIComponent({js_str(self.choice(['%41', '%', '%E6%97', 'a%20b', '%zz']))})"
        if k == 5:
            return f"[].reduce((p, q) => p + q)"
        return f"{self.arrn(1)}.reduce((p, q) => p + q)"

    def try_stmt(self):
        self.emit("try {")
        self.indent += 1
        self.push_scope()
        if self.chance(0.5):
            self.emit(f"console.log({js_str(self.fresh('t'))}, {self.throwing_expr()});")
        else:
            self.stmt()
            err = self.choice(ERROR_TYPES)
            self.emit(f"if ({self.bool(1)}) throw new {err}({self.str(1)});")
        self.pop_scope()
        self.indent -= 1
        has_finally = self.chance(0.5)
        self.emit("} catch (e) {")
        self.indent += 1
        self.emit(f"console.log({js_str(self.fresh('caught'))}, e.name + \": \" + e.message);")
        self.indent -= 1
        if has_finally:
            self.emit("} finally {")
            self.indent += 1
            self.emit(f"console.log({js_str(self.fresh('finally'))});")
            self.indent -= 1
        self.emit("}")

    def finally_function_stmt(self):
        f = self.fresh("tf")
        self.emit(f"function {f}(flag) {{")
        self.emit("  const log = [];")
        self.emit("  try {")
        self.emit("    log.push(\"try\");")
        self.emit(f"    if (flag) throw new {self.choice(ERROR_TYPES)}(\"thrown \" + flag);")
        self.emit(f"    return log.concat({self.str(1)});")
        self.emit("  } catch (e) {")
        self.emit("    log.push(e.name);")
        if self.chance(0.5):
            self.emit("    return log;")
        self.emit("  } finally {")
        self.emit("    log.push(\"finally\");")
        if self.chance(0.3):
            self.emit("    return log.concat(\"override\");")
        self.emit("  }")
        self.emit("  return log.concat(\"after\");")
        self.emit("}")
        self.emit(f"console.log({js_str(self.fresh('tf'))}, {f}(0), {f}(1), {f}(\"x\"));")

    def destructure_stmt(self):
        if self.chance(0.5):
            a, b, rest = self.fresh("d"), self.fresh("d"), self.fresh("r")
            self.emit(f"const [{a}, {b} = {self.num(0)}, ...{rest}] = {self.arrn(2)};")
            self.emit(f"console.log({js_str(self.fresh('darr'))}, {a}, {b}, {rest});")
        else:
            k1, k2 = self.r.sample([k for k in KEYS if k.isidentifier()], 2)
            v1, v2 = self.fresh("d"), self.fresh("d")
            self.emit(f"const {{ {k1}: {v1}, {k2}: {v2} = {self.str(0)} }} = {self.obj(2)};")
            self.emit(f"console.log({js_str(self.fresh('dobj'))}, {v1}, {v2});")

    def json_stmt(self):
        v = self.any_value(2)
        k = self.r.randrange(4)
        if k == 0:
            self.emit(f"console.log(JSON.stringify(JSON.parse(JSON.stringify({v}) ?? \"null\")));")
        elif k == 1:
            keys = ", ".join(js_str(x) for x in self.r.sample(KEYS, 3))
            indent = self.choice(["0", "2", '" "'])
            self.emit(f"console.log(JSON.stringify({self.obj(2)}, [{keys}], {indent}));")
        elif k == 2:
            self.emit(f"console.log(JSON.stringify({v}, (key, val) => (typeof val === \"number\" ? val * 2 : val)));")
        else:
            self.emit(f"console.log(JSON.stringify({{ list: {self.arrn(1)}, text: {self.str(1)}, nested: {self.obj(1)} }}, null, 2));")

    def sort_stmt(self):
        recs = self.fresh("recs")
        n = self.r.randrange(3, 12)
        items = ", ".join(f"{{ k: {self.r.randrange(3)}, id: {i} }}" for i in range(n))
        self.emit(f"const {recs} = [{items}];")
        self.emit(f"{recs}.sort((p, q) => p.k - q.k);")
        self.emit(f"console.log({js_str(self.fresh('sorted'))}, {recs}.map((x) => x.k + \":\" + x.id).join(\" \"));")

    def stmt(self):
        if self.block_depth >= 3:
            choices = [self.print_stmt, self.assign_stmt, self.mutate_stmt, self.loop_control_stmt]
        else:
            choices = [self.print_stmt, self.print_stmt, self.declare_stmt, self.declare_stmt,
                       self.assign_stmt, self.mutate_stmt, self.if_stmt, self.for_stmt,
                       self.for_of_stmt, self.for_in_stmt, self.while_stmt, self.switch_stmt,
                       self.loop_control_stmt, self.function_stmt, self.closures_stmt,
                       self.try_stmt, self.destructure_stmt, self.json_stmt]
            if self.block_depth == 0:
                choices += [self.counter_stmt, self.recursion_stmt, self.finally_function_stmt,
                            self.sort_stmt]
        self.choice(choices)()

    def program(self, seed: int) -> str:
        self.emit(f"// Generated by test/js/gen.py --seed {seed}; replay with that command.")
        for _ in range(self.r.randrange(3, 6)):
            self.declare_stmt()
        for _ in range(self.r.randrange(10, 22)):
            self.stmt()
        self.print_stmt()
        return "\n".join(self.lines) + "\n"


def generate(seed: int) -> str:
    """Program number `seed`."""
    return Gen(seed).program(seed)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", help="write the program here instead of to stdout")
    args = ap.parse_args(argv)
    text = generate(args.seed)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
