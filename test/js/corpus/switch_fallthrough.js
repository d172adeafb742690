// Cases fall through without break.
const trace = (x) => {
  const out = [];
  switch (x) {
    case 0:
      out.push("zero");
    case 1:
      out.push("one");
      break;
    case 2:
      out.push("two");
    default:
      out.push("default");
    case 3:
      out.push("three");
  }
  return out.join(",");
};
for (let i = 0; i < 5; i++) console.log(i, trace(i));
