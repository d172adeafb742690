// Exported functions closing over module-level state.
let hits = 0;
export function hit() {
  hits++;
  return hits;
}
hit();
hit();
console.log(hit());
