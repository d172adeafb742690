// A replacer function sees array indexes as string keys.
const keys = [];
JSON.stringify([["a"], ["b", "c"]], (k, v) => {
  keys.push(typeof k + ":" + k);
  return v;
});
console.log(keys);
