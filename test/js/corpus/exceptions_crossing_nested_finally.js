// An exception travels through several finally blocks in order.
const log = [];
function inner() {
  try {
    throw new Error("deep");
  } finally {
    log.push("inner finally");
  }
}
function middle() {
  try {
    inner();
  } finally {
    log.push("middle finally");
  }
}
try {
  middle();
} catch (e) {
  log.push("caught " + e.message);
} finally {
  log.push("outer finally");
}
console.log(log);
