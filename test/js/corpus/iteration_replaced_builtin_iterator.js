// A script that replaces a builtin prototype's [Symbol.iterator] (Array's, String's, Map's) has it
// called by for...of, destructuring and spread; an array with its own one too. The builtins'
// iterators keep their next() after any builtin change, and inherit from their own prototype.
const log = [];
const original = Array.prototype[Symbol.iterator];
Array.prototype[Symbol.iterator] = function* () { log.push("custom"); yield* original.call(this); yield "extra"; };
for (const x of [1, 2]) log.push(x);
const [a, b, c] = [1, 2];
log.push(a, b, c);
console.log(log.join(" "));
Array.prototype[Symbol.iterator] = original;
for (const x of [3]) log.push(x);
console.log(log.join(" "));
const sp = String.prototype[Symbol.iterator];
String.prototype[Symbol.iterator] = function* () { yield "s"; };
for (const ch of "abc") console.log(ch);
String.prototype[Symbol.iterator] = sp;
for (const ch of "ab") console.log(ch);
const mapIterator = Map.prototype[Symbol.iterator];
Map.prototype[Symbol.iterator] = function () { throw new Error("map iterator"); };
try { for (const e of new Map()) ; } catch (err) { console.log(err.message); }
Map.prototype[Symbol.iterator] = mapIterator;
const saved = Array.prototype[Symbol.iterator];
Array.prototype[Symbol.iterator] = function* () { yield "replaced"; };
console.log([...[1, 2]], [0, ...[1, 2, 3]].length);
Array.prototype[Symbol.iterator] = saved;
console.log([...[1, 2]]);
const own = [1, 2];
own[Symbol.iterator] = function* () { yield "own"; };
console.log([...own]);
Array.prototype.foo = 1;
const it = [1].values();
console.log(typeof it.next, JSON.stringify(it.next()), Object.getPrototypeOf(it) === Object.prototype);
delete Array.prototype.foo;
