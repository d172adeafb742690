// Parameters shadow outer bindings; inner lets shadow parameters in nested blocks.
const x = "outer";
function f(x) {
  {
    const x = "block";
    console.log(x);
  }
  return x;
}
console.log(f("param"), x);
