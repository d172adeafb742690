// An uncaught error whose name was emptied prints its message alone, as its toString does.
const e = new RangeError("out of range");
e.name = "";
console.log(String(e));
throw e;
