// Math.random is in [0, 1); its value is never printed.
let ok = true;
for (let i = 0; i < 1000; i++) {
  const r = Math.random();
  if (!(r >= 0 && r < 1)) ok = false;
}
console.log(ok);
console.log(typeof Math.random());
