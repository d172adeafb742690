// expect: 4:15 Function
// anchor: Function
// The Function constructor is out: no code is compiled at run time.
const adder = Function("a", "b", "return a + b");
console.log(adder(1, 2));
