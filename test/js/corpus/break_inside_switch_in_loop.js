// break inside switch leaves the switch, not the loop.
const out = [];
for (let i = 0; i < 4; i++) {
  switch (i) {
    case 1:
      out.push("one");
      break;
    default:
      out.push(i);
  }
}
console.log(out);
