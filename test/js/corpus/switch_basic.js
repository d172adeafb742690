// switch with break, default and strict comparison.
const name = (x) => {
  switch (x) {
    case 1:
      return "one";
    case "1":
      return "string one";
    case 2:
    case 3:
      return "two or three";
    default:
      return "other";
  }
};
console.log(name(1), name("1"), name(2), name(3), name(4), name(true));
