// expect: 5:3 getter
// anchor: get
// Getters are out.
const o = {
  get size() {
    return 1;
  },
};
console.log(o.size);
