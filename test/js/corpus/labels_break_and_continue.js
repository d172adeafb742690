// Labels: break and continue name an enclosing loop, and break leaves a labelled block.
const pairs = [];
outer: for (let i = 0; i < 4; i++) {
  for (let j = 0; j < 4; j++) {
    if (j > i) continue outer;
    if (i === 3) break outer;
    pairs.push(`${i}${j}`);
  }
}
console.log(pairs.join(" "));

function find(grid, wanted) {
  let found = null;
  search: {
    for (const [r, row] of grid.entries()) {
      for (const [c, cell] of row.entries()) {
        if (cell === wanted) {
          found = [r, c];
          break search;
        }
      }
    }
    console.log("not found:", wanted);
  }
  return found;
}
console.log(find([[1, 2], [3, 4]], 4), find([[1]], 9));

function* numbers(name) {
  try {
    yield 1;
    yield 2;
    yield 3;
  } finally {
    console.log("closed", name);
  }
}
rows: for (const a of numbers("outer")) {
  for (const b of numbers("inner")) {
    if (b === 2) continue rows;
    if (a === 3) break rows;
    console.log(a, b);
  }
}

function leave() {
  exit: try {
    break exit;
  } finally {
    console.log("the finally block runs on the way out");
  }
  return "after the label";
}
console.log(leave());

let n = 0;
a: b: while (true) {
  n++;
  do {
    if (n < 3) continue b;
    break a;
  } while (false);
}
console.log(n);

choose: switch (n) {
  case 3:
    for (;;) {
      break choose;
    }
  default:
    console.log("never");
}
skip: if (n) break skip;
console.log("done");
