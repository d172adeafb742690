// Blocks introduce scopes; inner declarations shadow outer ones.
const x = "outer";
{
  const x = "block";
  console.log(x);
  {
    const x = "inner";
    console.log(x);
  }
}
console.log(x);
let y = 1;
if (true) {
  let y = 2;
  y++;
  console.log(y);
}
console.log(y);
