// Counting finally runs across a loop that returns midway.
let finallies = 0;
function find(xs, target) {
  for (let i = 0; i < xs.length; i++) {
    try {
      if (xs[i] === target) return i;
    } finally {
      finallies++;
    }
  }
  return -1;
}
console.log(find([5, 6, 7, 8], 7), finallies);
console.log(find([1], 9), finallies);
