// === and !== never convert.
console.log(1 === 1, 1 === "1", null === undefined, NaN === NaN);
console.log(-0 === 0, "a" === "a", [] === [], true === 1);
console.log(1 !== "1", undefined !== undefined);
