// `async => ...` is an arrow with a parameter named async, not an async function.
const arrow = async => async * 2;
console.log(arrow(4), arrow.length, String(arrow));
const handlers = [(async) => !async, async => [async]];
console.log(handlers.map((h) => h(0)));
