// Unary + on non-strings.
console.log(+true, +false);
console.log(+null);
console.log(+undefined);
console.log(+[]);
console.log(+[5]);
console.log(+[1, 2]);
console.log(+{});
console.log(+"");
console.log(-"3");
console.log(-null);
console.log(-true);
