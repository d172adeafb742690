// A let in one case clause is in the TDZ for an earlier-jumping case.
const f = (k) => {
  switch (k) {
    case 0:
      let v = "set";
      return v;
    case 1:
      return v;
  }
  return "none";
};
console.log(f(0));
try {
  f(1);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
