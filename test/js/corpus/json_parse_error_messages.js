// Parse errors are SyntaxErrors with node's messages.
const bad = ["", " ", "{", "[1,", '{"a":}', "[1,]", '{"a":1,}', "{a:1}", "'s'", "01", "1.", ".5",
  "+1", "-", "tru", "nul", "[1 2]", '{"a" 1}', '"abc', "1 2", "NaN", "Infinity", "undefined",
  '"\\x41"', '"\t"', "[", "}", '{"a":1}}', "0x10", "1e", "-01", '"\\u12"'];
for (const text of bad) {
  try {
    JSON.parse(text);
    console.log("parsed", JSON.stringify(text));
  } catch (e) {
    console.log(JSON.stringify(text), e.name + ": " + e.message);
  }
}
