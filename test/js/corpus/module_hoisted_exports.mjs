// Exported function declarations are hoisted.
console.log(later());
export function later() {
  return "hoisted export";
}
