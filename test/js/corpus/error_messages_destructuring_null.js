// Destructuring null or undefined throws TypeError.
const tries = [
  () => {
    const { a } = null;
    return a;
  },
  () => {
    const { b } = undefined;
    return b;
  },
  () => {
    const { c: { d } } = { c: null };
    return d;
  },
  () => ((({ e }) => e)()),
];
for (const t of tries) {
  try {
    t();
  } catch (e) {
    console.log(e.name + ": " + e.message);
  }
}
