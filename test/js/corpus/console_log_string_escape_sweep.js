// How console.log quotes one-character strings inside an array, over 0..0xa0.
for (let c = 0; c <= 0xa0; c += 8) {
  const row = [];
  for (let k = c; k < c + 8 && k <= 0xa0; k++) row.push(String.fromCharCode(k));
  console.log(row);
}
