// finally runs even when catch throws.
const log = [];
try {
  try {
    throw new Error("one");
  } catch (e) {
    log.push("catch " + e.message);
    throw new Error("two");
  } finally {
    log.push("finally");
  }
} catch (e) {
  log.push("outer " + e.message);
}
console.log(log);
