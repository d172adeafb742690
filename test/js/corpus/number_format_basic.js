// Integers and simple decimals print as node prints them.
console.log(0);
console.log(1);
console.log(-1);
console.log(42);
console.log(3.14);
console.log(-2.5);
console.log(100);
console.log(123456789);
console.log(0.5);
console.log(1.0);
console.log(1.50);
