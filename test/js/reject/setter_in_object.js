// expect: 6:3 setter
// anchor: set
// Setters are out.
let stored = 0;
const o = {
  set value(v) {
    stored = v;
  },
};
console.log(stored);
