// A module with exported functions, called from its own top level.
export function double(x) {
  return x * 2;
}
export function greet(name) {
  return `hello ${name}`;
}
console.log(double(21), greet("module"));
