// Objects and arrays around the line-width threshold.
for (let n = 60; n <= 80; n += 2) {
  console.log({ s: "x".repeat(n - 10) });
  console.log({ a: "x".repeat((n - 20) / 2), b: "y".repeat((n - 20) / 2) });
}
for (let n = 1; n <= 6; n++) {
  const arr = [];
  for (let i = 0; i < n; i++) arr.push("abcdefghijklm".slice(0, 10 + i));
  console.log(arr);
}
