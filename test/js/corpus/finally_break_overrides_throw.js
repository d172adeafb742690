// break inside finally cancels a pending exception.
let out = "";
for (let i = 0; i < 1; i++) {
  try {
    throw new Error("dropped");
  } finally {
    out = "breaking";
    break;
  }
}
console.log(out);
