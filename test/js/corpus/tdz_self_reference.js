// let x = x throws: the initializer runs in the TDZ.
try {
  let x = x + 1;
  console.log(x);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
