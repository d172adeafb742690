// Error messages for long inputs quote a part of the text.
const long = '{"key": "' + "v".repeat(50) + '", "other": x}';
try {
  JSON.parse(long);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
const longArr = "[" + "1,".repeat(40) + "]";
try {
  JSON.parse(longArr);
} catch (e) {
  console.log(e.name + ": " + e.message);
}
try {
  JSON.parse("[" + "1,".repeat(40));
} catch (e) {
  console.log(e.name + ": " + e.message);
}
