// Templates with conditional and nested template expressions.
const items = ["a", "b"];
const html = `<ul>${items.map((i) => `<li>${i}</li>`).join("")}</ul>`;
console.log(html);
const n = 1;
console.log(`${n} item${n === 1 ? "" : "s"}`);
console.log(`${`${`${"deep"}`}`}`);
