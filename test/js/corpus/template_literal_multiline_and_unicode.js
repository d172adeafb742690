// Multi-line templates and Unicode content.
const name = "日本";
const s = `first ${name}
  second line with emoji 😀
third`;
console.log(s);
console.log(s.length);
console.log(`\u{1F600}`.length, `\x41`);
