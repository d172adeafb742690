// finally runs after normal completion, after catch, and on return.
const log = [];
try {
  log.push("try");
} finally {
  log.push("finally 1");
}
try {
  throw new Error("x");
} catch (e) {
  log.push("catch");
} finally {
  log.push("finally 2");
}
const f = () => {
  try {
    return "from try";
  } finally {
    log.push("finally 3");
  }
};
log.push(f());
console.log(log);
