// Repeated float additions accumulate rounding error exactly as doubles do.
let sum = 0;
for (let i = 0; i < 10; i++) {
  sum += 0.1;
}
console.log(sum);
let prod = 1;
for (let i = 0; i < 20; i++) {
  prod *= 1.1;
}
console.log(prod);
let third = 0;
for (let i = 0; i < 3; i++) third += 1 / 3;
console.log(third, third === 1);
let cents = 0;
for (let i = 0; i < 100; i++) cents += 0.01;
console.log(cents);
