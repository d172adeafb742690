// repeat's RangeError shows the count as given, before truncation: -1.5 stays -1.5.
for (const count of [-1, -1.5, -0.5, "-2", Infinity, -Infinity, 2.9, "3", NaN, null]) {
  try {
    console.log(JSON.stringify(count), JSON.stringify("ab".repeat(count)));
  } catch (e) {
    console.log(JSON.stringify(count), e.name, e.message);
  }
}
