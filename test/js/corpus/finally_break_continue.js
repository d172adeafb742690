// break and continue cross finally blocks, which still run.
const log = [];
for (let i = 0; i < 4; i++) {
  try {
    if (i === 1) continue;
    if (i === 3) break;
    log.push("body " + i);
  } finally {
    log.push("finally " + i);
  }
}
console.log(log);
function g() {
  for (const x of [1, 2]) {
    try {
      return x;
    } finally {
      log.push("return crossed finally " + x);
    }
  }
}
console.log(g(), log.length);
