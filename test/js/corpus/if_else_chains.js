// if / else if / else chains.
const grade = (n) => {
  if (n >= 90) return "A";
  else if (n >= 80) return "B";
  else if (n >= 70) return "C";
  else return "F";
};
for (const n of [95, 85, 75, 10, 90, 89.999]) console.log(n, grade(n));
if (0) console.log("no"); else console.log("zero is falsy");
if ("") console.log("no");
if ([]) console.log("empty array is truthy");
if ({}) console.log("empty object is truthy");
