// Summing fields of objects in an array.
const items = [
  { name: "a", price: 1.25, qty: 4 },
  { name: "b", price: 0.1, qty: 3 },
  { name: "c", price: 19.99, qty: 1 },
];
const total = items.reduce((acc, it) => acc + it.price * it.qty, 0);
console.log(total);
console.log(total.toFixed(2));
console.log(items.map((it) => it.name).join(","));
