// FizzBuzz.
const out = [];
for (let i = 1; i <= 30; i++) {
  out.push(i % 15 === 0 ? "FizzBuzz" : i % 3 === 0 ? "Fizz" : i % 5 === 0 ? "Buzz" : String(i));
}
console.log(out.join(" "));
