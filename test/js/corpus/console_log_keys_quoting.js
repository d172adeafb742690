// Keys that are not identifiers are quoted; integer keys too.
console.log({ "a-b": 1, "x y": 2, "": 3, 1: 4, "é": 5, $d: 6, _u: 7, "1e3": 8 });
console.log({ "it's": 1 });
console.log({ "\n": 1 });
console.log({ class: 1, null: 2, undefined: 3 });
