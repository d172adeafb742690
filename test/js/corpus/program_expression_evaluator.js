// An arithmetic expression tokenizer, parser and evaluator, with error reporting.
const tokenize = (src) => {
  const tokens = [];
  let i = 0;
  while (i < src.length) {
    const ch = src[i];
    if (ch === " ") { i++; continue; }
    if ("0123456789.".includes(ch)) {
      let j = i;
      while (j < src.length && "0123456789.".includes(src[j])) j++;
      tokens.push({ type: "num", value: parseFloat(src.slice(i, j)), pos: i });
      i = j;
      continue;
    }
    if ("+-*/()^%".includes(ch)) { tokens.push({ type: "op", value: ch, pos: i }); i++; continue; }
    if (ch >= "a" && ch <= "z") {
      let j = i;
      while (j < src.length && src[j] >= "a" && src[j] <= "z") j++;
      tokens.push({ type: "id", value: src.slice(i, j), pos: i });
      i = j;
      continue;
    }
    throw new SyntaxError(`Unexpected character '${ch}' at ${i}`);
  }
  return tokens;
};
const parse = (tokens) => {
  let pos = 0;
  const peek = () => tokens[pos];
  const next = () => tokens[pos++];
  const primary = () => {
    const t = next();
    if (!t) throw new SyntaxError("Unexpected end of input");
    if (t.type === "num") return { kind: "num", value: t.value };
    if (t.type === "id") {
      if (peek()?.value === "(") { next(); const arg = expr(); expect(")"); return { kind: "call", name: t.value, arg }; }
      return { kind: "var", name: t.value };
    }
    if (t.value === "(") { const e = expr(); expect(")"); return e; }
    if (t.value === "-") return { kind: "neg", arg: unary() };
    throw new SyntaxError(`Unexpected token '${t.value}' at ${t.pos}`);
  };
  const expect = (v) => { const t = next(); if (!t || t.value !== v) throw new SyntaxError(`Expected '${v}'`); };
  const unary = () => primary();
  const power = () => { const base = unary(); if (peek()?.value === "^") { next(); return { kind: "bin", op: "^", left: base, right: power() }; } return base; };
  const term = () => { let left = power(); while (["*", "/", "%"].includes(peek()?.value)) { const op = next().value; left = { kind: "bin", op, left, right: power() }; } return left; };
  const expr = () => { let left = term(); while (["+", "-"].includes(peek()?.value)) { const op = next().value; left = { kind: "bin", op, left, right: term() }; } return left; };
  const tree = expr();
  if (pos < tokens.length) throw new SyntaxError(`Unexpected token '${peek().value}' at ${peek().pos}`);
  return tree;
};
const env = { pi: Math.PI, e: Math.E, x: 3 };
const fns = { sqrt: Math.sqrt, abs: Math.abs, floor: Math.floor, ln: Math.log };
const evaluate = (n) => {
  switch (n.kind) {
    case "num": return n.value;
    case "var": if (!(n.name in env)) throw new RangeError(`${n.name} is not defined`); return env[n.name];
    case "neg": return -evaluate(n.arg);
    case "call": { const f = fns[n.name]; if (!f) throw new TypeError(`${n.name} is not a function`); return f(evaluate(n.arg)); }
    case "bin": {
      const l = evaluate(n.left); const r = evaluate(n.right);
      switch (n.op) { case "+": return l + r; case "-": return l - r; case "*": return l * r; case "/": return l / r; case "%": return l % r; case "^": return Math.pow(l, r); }
    }
  }
  throw new Error("bad node");
};
const inputs = ["1 + 2 * 3", "(1 + 2) * 3", "2 ^ 3 ^ 2", "-x * 2", "sqrt(16) + abs(-3)", "1 / 0", "0 / 0", "10 % 4 - 0.1", "pi * x ^ 2", "ln(e)", "1 +", "2 * (3", "y + 1", "foo(1)", "3 $ 4", "1.5.2 + 1", "floor(7 / 2)"];
for (const src of inputs) {
  try {
    const tree = parse(tokenize(src));
    console.log(src.padEnd(20), "=", evaluate(tree));
  } catch (e) {
    console.log(src.padEnd(20), "!", `${e.name}: ${e.message}`);
  }
}
console.log(parse(tokenize("1 + 2 * x")));
