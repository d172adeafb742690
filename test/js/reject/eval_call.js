// expect: 4:16 eval
// anchor: eval
// `eval` is out: no code is compiled at run time.
const result = eval("1 + 1");
console.log(result);
