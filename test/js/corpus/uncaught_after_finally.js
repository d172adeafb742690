// finally runs, then the exception stays uncaught.
try {
  throw new Error("escapes");
} finally {
  console.log("finally ran");
}
