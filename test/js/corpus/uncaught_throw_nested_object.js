// node shows an uncaught object to depth 5, not console.log's 2, so a nested one breaks into lines.
const failure = { error: { code: "E_UPSTREAM", detail: { status: 502, body: { reason: "bad gateway" } } } };
console.log(failure);
throw failure;
