// trim, trimStart and trimEnd remove Unicode white space and line terminators.
const s = " \t\n\r\v\f\u00a0\ufeff\u2028\u2029\u3000 text \u2003\n";
console.log(JSON.stringify(s.trim()));
console.log(JSON.stringify(s.trimStart()));
console.log(JSON.stringify(s.trimEnd()));
console.log(JSON.stringify("\u200b x \u200b".trim()));
console.log(JSON.stringify("   ".trim()));
console.log(JSON.stringify("a b".trim()));
