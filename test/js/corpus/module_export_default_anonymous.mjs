// A module whose default export is an anonymous function; top-level code still runs.
export default function (req) {
  return req.n + 1;
}
const local = (n) => n * 3;
console.log(local(3));
