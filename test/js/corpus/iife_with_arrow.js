// An immediately invoked arrow function.
const result = (() => {
  const local = 5;
  return local * 2;
})();
console.log(result);
console.log(((x) => x + 1)(1));
