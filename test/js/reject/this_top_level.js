// expect: 4:14 this
// anchor: this
// `this` is out.
const self = this;
console.log(self);
