// null, undefined and booleans inside structures.
console.log([null, undefined, true, false]);
console.log({ n: null, u: undefined, t: true });
