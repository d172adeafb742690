// The default sort is stable too (equal strings from different sources).
const words = ["b1", "a", "b2", "c", "a"];
const tagged = words.map((w, i) => ({ w: w[0], i }));
tagged.sort((x, y) => (x.w < y.w ? -1 : x.w > y.w ? 1 : 0));
console.log(tagged.map((t) => t.w + t.i).join(" "));
const nums = ["10", "9", "10", "1"];
console.log(nums.sort());
