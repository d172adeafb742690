// A text histogram.
const data = [3, 7, 1, 0, 5, 9, 2];
for (let i = 0; i < data.length; i++) {
  console.log(String(i).padStart(2) + " " + "#".repeat(data[i]) + (data[i] === 0 ? "(none)" : ""));
}
