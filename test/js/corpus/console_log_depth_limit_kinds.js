// Past depth 2 console.log names what it hides by its constructor (and an iterator's tag).
const deep = (v) => ({ a: { b: { c: v } } });
const tagged = new TypeError("bad");
tagged.code = "E_BAD";
const withProps = (x) => x;
withProps.meta = 1;
console.log(deep(new Map([[1, 2]]).keys()));
console.log(deep(new Set([1]).values()));
console.log(deep(new Map([[1, 2]]).entries()));
console.log(deep(tagged));
console.log(deep(withProps));
console.log(deep([1, 2]), deep({ k: 1 }), deep(new Map([[1, 2]])), deep(new Set([1])));
console.log(deep([].keys()), deep(withProps).a.b.c.meta);
