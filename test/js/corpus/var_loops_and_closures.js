// var in loops: one binding per function, shared by every iteration and every closure.
const byVar = [];
for (var i = 0; i < 3; i++) byVar.push(() => i);
const byLet = [];
for (let j = 0; j < 3; j++) byLet.push(() => j);
console.log(byVar.map((f) => f()), byLet.map((f) => f()), i);

const keys = [];
for (var key in { x: 1, y: 2 }) keys.push(() => key);
console.log(keys.map((f) => f()), key);

for (var [first, second] of [["a", 1], ["b", 2]]) {
  var last = first + second;
}
console.log(first, second, last);

function counter() {
  var count = 0;
  return {
    up() {
      count += 1;
      return count;
    },
    get() {
      return count;
    },
  };
}
const c = counter();
c.up();
c.up();
console.log(c.get());

function body() {
  var total = 0;
  var n = 0;
  while (n < 4) {
    var step = n * 2;
    total += step;
    n++;
  }
  do {
    var once = "ran";
  } while (false);
  return [total, step, once];
}
console.log(body());

function* numbers() {
  for (var k = 0; k < 3; k++) yield k;
  yield "after the loop: " + k;
}
console.log([...numbers()]);

async function later() {
  var x = await Promise.resolve(1);
  var y = await 2;
  return x + y;
}
later().then((v) => console.log("async", v));

const cls = class {
  static {
    var inStaticBlock = "static block";
    console.log(inStaticBlock);
  }
  method() {
    var local = "method";
    return local;
  }
};
console.log(new cls().method());


// A let in a for head: a closure made by the initialiser keeps the value the initialiser
// left; the first iteration already has its own copy.
let probeBefore;
let probeTest;
let run = true;
for (let x = "outside", _ = (probeBefore = () => x); run && [(x = "inside"), (probeTest = () => x)]; ) run = false;
console.log(probeBefore(), probeTest());
const heads = [];
for (let k = 0, first = () => k; k < 3; k++) heads.push(first, () => k);
console.log(heads.map((g) => g()));
