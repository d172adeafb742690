// catch without a binding.
try {
  throw new Error("ignored");
} catch {
  console.log("caught without binding");
}
