// Division and remainder with signs, zero and fractions.
console.log(7 / 2);
console.log(-7 / 2);
console.log(7 % 3);
console.log(-7 % 3);
console.log(7 % -3);
console.log(-7 % -3);
console.log(5.5 % 2);
console.log(-5.5 % 2);
console.log(0.3 % 0.1);
console.log(1 % 0);
console.log(0 / 0);
console.log(5 % Infinity);
console.log(Infinity % 5);
console.log(1 / 0, -1 / 0);
