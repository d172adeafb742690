// Template literals with expressions, nesting and escapes.
const name = "world";
const n = 3;
console.log(`hello ${name}`);
console.log(`${n} + ${n} = ${n + n}`);
console.log(`nested ${`inner ${n * 2}`}`);
console.log(`obj ${{ a: 1 }} arr ${[1, 2, 3]}`);
console.log(`null ${null} undef ${undefined} bool ${true}`);
console.log(`line1
line2`);
console.log(`tab\tand \`backtick\` and \${not}`);
console.log(`${""}`.length);
console.log(`a${1}${2}b`);
