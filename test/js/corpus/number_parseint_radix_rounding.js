// parseInt past 2^53: radix 10 and the powers of two round correctly, other radixes round
// as V8's chunked loop does (the spec lets them approximate), after skipping leading zeros.
const texts = ["9007199254740993", "20000000000001", "0000zzzzzzzzzzzzzzz", "123456789abcdefghij", "11111111111111111111111111111111111111111111111111111111"];
for (const text of texts) {
  const row = [];
  for (const radix of [2, 7, 10, 16, 32, 36]) row.push(parseInt(text, radix));
  console.log(text, row.join(" "));
}
console.log(0x20000000000001, 0x20000000000003, 0x200000000000010001, 0o4000000000000000001);
console.log(Number("0x20000000000001"), Number("0b100000000000000000000000000000000000000000000000000001"));
