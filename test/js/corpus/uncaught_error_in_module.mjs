// An uncaught Error in a module.
export function helper() {
  return 1;
}
console.log(helper());
throw new Error("module failure");
