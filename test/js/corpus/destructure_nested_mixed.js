// Deep mixed patterns, as for request-like data.
const req = {
  method: "POST",
  headers: { host: "example", accept: ["a", "b"] },
  body: { items: [{ id: 1, qty: 2 }, { id: 2 }] },
};
const {
  method,
  headers: { host, accept: [firstAccept] },
  body: { items: [{ id: firstId }, { qty = 1 }] },
} = req;
console.log(method, host, firstAccept, firstId, qty);
