// TypeErrors raised by the engine carry node's messages.
const tries = [
  () => null.f,
  () => undefined.f(),
  () => ({}).x.y,
  () => [].x.y,
  () => "s".foo(),
  () => new Map().get.x.y,
  () => ({ a: 1 }).a.b.c,
  () => JSON.parse("{"),
  () => [].reduce((a, b) => a),
  () => "abc".repeat(-2),
  () => (1.5).toFixed(200),
];
for (const t of tries) {
  try {
    const r = t();
    console.log("no error", typeof r);
  } catch (e) {
    console.log(e.name + ": " + e.message);
  }
}
