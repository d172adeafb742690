// String methods with a RegExp: match, matchAll, replace (templates and functions),
// replaceAll, split with captures and limits, search.
console.log("a1b22c333".match(/\d+/g), "abc".match(/x/), "abc".match(/x/g), "x".match(/x/g));
console.log([..."a1b2c3".matchAll(/[a-z](\d)/g)].map((r) => `${r[0]}:${r[1]}@${r.index}`));
console.log("2024-01-02".replace(/(\d+)-(\d+)-(\d+)/, "$3/$2/$1"));
console.log("test".replace(/(?<first>t)/g, "[$<first>]"), "abc".replace(/b/, "$'$`"));
console.log("abc".replace(/(b)/, "$01$10$2$0"), "abc".replace(/b/g, "$"), "x".replace(/x/, "$<n>"));
console.log("aaa".replace(/a*?/g, "-"), "aaa".replace(/a*/g, "-"), "x-y".replace(/(\w)-(\w)/, "$2$1$$$&"));
console.log("one two".replace(/(\w+) (\w+)/, (all, a, b, at, whole) => `${b} ${a} ${at} ${whole}`));
console.log("k=v".replace(/(?<k>\w)=(?<v>\w)/, (...args) => JSON.stringify(args)));
console.log("Hello World".replace(/o/g, (c, at) => at), "abcabc".replaceAll(/b/g, "B"));
console.log("a-b_c d".split(/[-_ ]/), "abc".split(/(?:)/), "".split(/x/), "".split(/(?:)/));
console.log("a1b2c3".split(/\d/, 2), "a1b".split(/(\d)/), "a, b ,c".split(/\s*,\s*/));
console.log("Hello World".search(/o/), "abc".search(/z/), "abc".search("c"));
try {
  "a".matchAll(/a/);
} catch (e) {
  console.log(e.name, e.message);
}
try {
  "a".replaceAll(/a/, "b");
} catch (e) {
  console.log(e.name, e.message);
}
