// Malformed URI sequences throw URIError.
const bad = ["%", "%zz", "%C3", "%E6%97", "%FF", "%C0%80"];
for (const s of bad) {
  try {
    decodeURIComponent(s);
    console.log("decoded", s);
  } catch (e) {
    console.log(s, e.name + ": " + e.message);
  }
}
try {
  encodeURIComponent("\ud800");
} catch (e) {
  console.log(e.name + ": " + e.message);
}
console.log(encodeURIComponent("\ud83d\ude00"));
