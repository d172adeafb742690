// A malformed pattern given to the constructor is a SyntaxError at run time.
for (const bad of ["a**", "[b-a]", "(?<a>x)(?<a>y)", "x{2,1}", "a)", "(?", "[", "{1}"]) {
  try {
    new RegExp(bad);
    console.log("ok", bad);
  } catch (e) {
    console.log(`${e.name}: ${e.message}`);
  }
}
for (const bad of ["\\u{110000}", "\\c", "a{", "]", "\\-"]) {
  try {
    console.log(new RegExp(bad, "u").source);
  } catch (e) {
    console.log(`${e.name}: ${e.message}`);
  }
}
try {
  new RegExp("a", "gg");
} catch (e) {
  console.log(`${e.name}: ${e.message}`);
}
new RegExp("(", "g");
