// The iteration protocol: [Symbol.iterator] on the script's own objects, used by for-of,
// spread, destructuring, Array.from, Map, Set and Object.fromEntries; the builtins' iterators.
class Range {
  constructor(n) { this.n = n; }
  [Symbol.iterator]() {
    let i = 0;
    const n = this.n;
    return { next() { return i < n ? { value: i++, done: false } : { value: undefined, done: true }; } };
  }
}
console.log([...new Range(3)], Array.from(new Range(2)), Array.from(new Range(3), (x) => x * 10));
console.log(new Set(new Range(4)).size, [0, ...new Range(6)].length);
for (const x of new Range(2)) console.log("of", x);
const [a, b, ...rest] = new Range(5);
console.log(a, b, rest);
const entries = { [Symbol.iterator]() { let k = 0; return { next: () => ({ done: k > 1, value: ["k" + k, k++] }) }; } };
console.log(new Map(entries), Object.fromEntries(entries));
const it = [1, 2, 3][Symbol.iterator]();
console.log(it.next(), [...it], it.next(), it[Symbol.iterator]() === it);
console.log([..."a😀b"], "ab"[Symbol.iterator]().next(), [...new Set([3, 4]).entries()]);
console.log(new Map([[1, 2]])[Symbol.iterator]().next().value, [...new Map([[5, 6]])]);
const noNext = { [Symbol.iterator]() { return {}; } };
try { for (const x of noNext) console.log(x); } catch (e) { console.log(e.constructor.name); }
const badResult = { [Symbol.iterator]() { return 5; } };
try { [...badResult]; } catch (e) { console.log(e.message); }
const notObject = { [Symbol.iterator]() { return { next() { return 1; } }; } };
try { [...notObject]; } catch (e) { console.log(e.message); }
try { [...{}]; } catch (e) { console.log(e.message); }
