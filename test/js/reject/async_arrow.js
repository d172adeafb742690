// expect: 4:14 async
// anchor: async
// async arrow functions are out.
const load = async () => 1;
console.log(load);
