// expect: 4:1 async
// anchor: async
// async functions are out.
async function load() {
  return 1;
}
console.log(load);
