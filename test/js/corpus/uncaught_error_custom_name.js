// A name ending in "Error" that is not the constructor's is shown after the constructor's.
const e = new Error("user 42 not found");
e.name = "NotFoundError";
console.log(String(e));
throw e;
