// expect: 4:7
// anchor: c
// A syntax error: const without an initializer (node: "Missing initializer in const declaration").
const c;
console.log(c);
