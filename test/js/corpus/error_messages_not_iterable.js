// Spreading or iterating non-iterables throws TypeError.
const tries = [
  () => [...{}],
  () => [...123],
  () => {
    const plain = { a: 1 };
    for (const x of plain) console.log(x);
  },
  () => {
    const [a] = null;
    return a;
  },
  () => {
    const [b] = {};
    return b;
  },
  () => new Map([1, 2]),
  () => new Set(5),
];
for (const t of tries) {
  try {
    t();
    console.log("no error");
  } catch (e) {
    console.log(e.name + ": " + e.message);
  }
}
