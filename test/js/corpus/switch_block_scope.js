// let in a case clause is scoped to the whole switch block.
const f = (k) => {
  switch (k) {
    case 1: {
      const msg = "braced one";
      return msg;
    }
    case 2: {
      const msg = "braced two";
      return msg;
    }
  }
  return "none";
};
console.log(f(1), f(2), f(3));
