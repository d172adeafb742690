// A cycle throws TypeError; the first line of its message is stable.
const a = { name: "a" };
a.self = a;
try {
  JSON.stringify(a);
} catch (e) {
  console.log(e.name);
  console.log(e.message.split("\n")[0]);
}
const arr = [1];
arr.push(arr);
try {
  JSON.stringify(arr);
} catch (e) {
  console.log(e.name + ": " + e.message.split("\n")[0]);
}
