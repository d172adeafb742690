// `in` on a non-object throws TypeError.
for (const target of ["str", 5, null, undefined, true]) {
  try {
    console.log("x" in target);
  } catch (e) {
    console.log(e.name + ": " + e.message);
  }
}
