// Dangling else binds to the nearest if.
const f = (a, b) => {
  if (a)
    if (b) return "ab";
    else return "a only";
  return "none";
};
console.log(f(true, true), f(true, false), f(false, true));
