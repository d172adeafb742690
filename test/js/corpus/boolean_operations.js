// Booleans in arithmetic and string contexts.
console.log(true + true, true * 10, false - 1);
console.log(String(true), `${false}`, true + "");
console.log(JSON.stringify([true, false]), [true, false].join());
console.log(true === 1, true == 1);
