// Operations on empty arrays.
const e = [];
console.log(e.map((x) => x), e.filter((x) => x), e.join("-"), e.slice(), e.flat());
console.log(e.find((x) => true), e.findIndex((x) => true), e.indexOf(1), e.includes(1));
console.log(e.concat(), e.reverse(), e.sort(), e.splice(0));
console.log(e);
