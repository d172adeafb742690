// default in the middle is only taken when no case matches.
const f = (x) => {
  const out = [];
  switch (x) {
    case "a":
      out.push("a");
    default:
      out.push("d");
    case "b":
      out.push("b");
  }
  return out;
};
console.log(f("a"), f("b"), f("z"));
