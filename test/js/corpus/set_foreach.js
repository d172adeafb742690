// Set forEach passes (value, value, set).
const s = new Set(["a", "b"]);
s.forEach((v, k, set) => console.log(v, k, set === s));
