// Closures created in the same scope share its variables.
function pair() {
  let value = 0;
  const set = (v) => {
    value = v;
  };
  const get = () => value;
  return [set, get];
}
const [set, get] = pair();
set(5);
console.log(get());
set("x");
console.log(get());
