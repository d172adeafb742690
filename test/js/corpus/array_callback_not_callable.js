// A value that is not a function given where a callback is expected: V8 names it by its
// value in Array methods, and by its type in Map and Set forEach.
const values = [5, "s", "", null, undefined, true, [], [1, 2], {}, new Map(), new Set(), new Error("boom")];
for (const v of values) {
  try {
    [1].map(v);
  } catch (e) {
    console.log("map:", e.name, e.message);
  }
  try {
    new Map([[1, 2]]).forEach(v);
  } catch (e) {
    console.log("Map forEach:", e.name, e.message);
  }
}
