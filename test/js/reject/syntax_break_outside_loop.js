// expect: 5:1 break
// anchor: break
// A syntax error: break outside a loop or switch (node: "Illegal break statement").
console.log(1);
break;
