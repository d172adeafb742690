// instanceof with a non-callable right side throws TypeError.
for (const rhs of [{}, 1, "s", null]) {
  try {
    console.log([] instanceof rhs);
  } catch (e) {
    console.log(e.name + ": " + e.message);
  }
}
