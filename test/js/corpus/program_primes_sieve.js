// Sieve of Eratosthenes.
const n = 200;
const composite = [];
for (let i = 0; i <= n; i++) composite.push(false);
const primes = [];
for (let i = 2; i <= n; i++) {
  if (composite[i]) continue;
  primes.push(i);
  for (let j = i * i; j <= n; j += i) composite[j] = true;
}
console.log(primes.length);
console.log(primes);
