// An error's cause is its own property but not enumerable: keys, JSON, spread and for-in skip it.
const root = new Error("connection refused");
const e = new Error("request failed", { cause: root });
console.log(e.cause === root, e.cause.message, "cause" in e);
console.log(Object.keys(e), Object.entries(e), JSON.stringify(e), { ...e });
for (const k in e) console.log("enumerable", k);
const plain = new Error("no cause");
console.log("cause" in plain, plain.cause);
const undef = new Error("undefined cause", { cause: undefined });
console.log("cause" in undef, Object.keys(undef));
const coded = new TypeError("bad", { cause: { code: "E_BAD" } });
coded.status = 400;
console.log(Object.keys(coded), JSON.stringify(coded), coded.cause);
console.log(JSON.stringify({ error: e.message, cause: e.cause.message }));
