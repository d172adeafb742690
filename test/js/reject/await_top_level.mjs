// expect: 5:1 await
// anchor: await
// await is out (top-level await in a module).
console.log("before");
await null;
export function f() {
  return 1;
}
