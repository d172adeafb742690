// A module whose default export is a named function.
export default function handler(req) {
  return { status: 200, body: JSON.stringify({ path: req.path }) };
}
console.log(handler({ path: "/x" }));
