// Functions are values compared by reference.
const f = () => 1;
const g = () => 1;
console.log(f === f, f === g, typeof f);
function h() {}
console.log(typeof h, h === h);
