// Destructuring the catch parameter.
try {
  throw { code: 404, detail: { msg: "not found" } };
} catch ({ code, detail: { msg } }) {
  console.log(code, msg);
}
try {
  throw new RangeError("out of range");
} catch ({ name, message }) {
  console.log(name, message);
}
