// switch uses ===: NaN never matches, -0 matches 0.
const f = (x) => {
  switch (x) {
    case NaN:
      return "nan";
    case 0:
      return "zero";
    default:
      return "default";
  }
};
console.log(f(NaN), f(-0), f(0));
