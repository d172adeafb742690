// The TDZ applies inside blocks and shadows outer bindings.
const x = "outer";
{
  try {
    console.log(x);
  } catch (e) {
    console.log(e.name + ": " + e.message);
  }
  const x = "inner";
  console.log(x);
}
