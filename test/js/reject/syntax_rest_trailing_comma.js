// expect: 4:12 Rest element must be last element
// anchor: rest
// An object pattern's rest element takes no trailing comma.
const { ...rest, } = { a: 1 };
console.log(rest);
