// The order of try, catch and finally with nested handlers.
const log = [];
try {
  try {
    log.push(1);
    throw new Error("a");
  } catch (e) {
    log.push(2);
    throw new Error("b");
  } finally {
    log.push(3);
  }
} catch (e) {
  log.push("outer " + e.message);
} finally {
  log.push(4);
}
console.log(log.join(" "));
