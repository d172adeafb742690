// Object.values keeps property order, including integer keys first.
const o = { b: "B", 1: "one", a: "A", 0: "zero" };
console.log(Object.values(o));
console.log(Object.entries(o).map(([k, v]) => k + "=" + v).join("&"));
