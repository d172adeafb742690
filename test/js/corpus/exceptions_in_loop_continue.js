// Catching inside a loop keeps the loop going.
const results = [];
for (const s of ['{"a":1}', "bad", "[1]", "{", "2"]) {
  try {
    results.push(JSON.parse(s));
  } catch (e) {
    results.push("error");
  }
}
console.log(results);
