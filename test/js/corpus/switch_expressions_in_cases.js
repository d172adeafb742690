// Case expressions are evaluated in order until one matches.
const log = [];
const v = (x) => {
  log.push(x);
  return x;
};
switch (3) {
  case v(1):
    log.push("one");
    break;
  case v(3):
    log.push("three");
    break;
  case v(5):
    log.push("five");
}
console.log(log);
