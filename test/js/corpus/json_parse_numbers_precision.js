// Numbers parse to the nearest double.
const texts = ["0.1", "0.30000000000000004", "9007199254740993", "1.7976931348623157e308",
  "4.9e-324", "2.5e-324", "1e21", "100000000000000000000", "-0", "0e5", "1E+2"];
for (const t of texts) console.log(t, JSON.parse(t));
