// Arrays hold references: pushing an array then mutating it shows through.
const inner = [1];
const outer = [inner, inner];
inner.push(2);
console.log(outer);
outer[0].push(3);
console.log(inner);
