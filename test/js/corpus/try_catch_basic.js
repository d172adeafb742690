// try/catch catches thrown values of any type.
const values = [new Error("e"), new TypeError("t"), "string", 42, null, undefined, { code: 1 }, [1]];
for (const v of values) {
  try {
    throw v;
  } catch (e) {
    console.log(typeof e, e === v);
  }
}
