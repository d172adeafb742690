// RegExp literals and exec: captures, named groups, index and input, leftmost-first choice.
const date = /(?<year>\d{4})-(?<month>\d{2})-(?<day>\d{2})/;
const m = date.exec("released on 2024-03-15, patched later");
console.log(m);
console.log(m.index, m.groups.year, m.groups.day, m.length);
console.log(/a|ab/.exec("abc")[0], /(a|ab)(c|bcd)(d*)/.exec("abcd").slice(1));
console.log(/(?:(a)|b)+/.exec("ab"), /(a)?b/.exec("b"));
console.log(/x{2,3}?/.exec("xxxx")[0], /x{2,}/.exec("xxxxx")[0], /a*?b/.exec("aaab")[0]);
console.log(/(x)*/.exec("xx"), /(?:x(y)?)+/.exec("xyx"));
console.log(/^\s+|\s+$/.exec("  hi  ").index, /\d+(?:\.\d+)?/.exec("v1.25x")[0]);
console.log(/no/.exec("yes"), /()/.exec("x"), /$/.exec("abc").index);
const d = /a(b)?(?<c>c)/d.exec("xac");
console.log(d.indices, d.indices.groups);
