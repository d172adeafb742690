// Throwing and catching non-Error values.
const cases = [1, "message", { reason: "r" }, [1, 2], null, true];
for (const c of cases) {
  try {
    throw c;
  } catch (e) {
    console.log(e);
  }
}
