// Prefix and postfix ++ and -- on variables and properties.
let i = 5;
console.log(i++, i);
console.log(++i, i);
console.log(i--, i);
console.log(--i, i);
const o = { n: 1 };
o.n++;
++o.n;
console.log(o.n);
const arr = [10, 20];
arr[1]--;
console.log(arr);
let f = 1.5;
f++;
console.log(f);
let s = "5";
s++;
console.log(s, typeof s);
