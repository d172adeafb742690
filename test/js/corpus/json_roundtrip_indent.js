// Round trip through indented JSON.
const data = [{ id: 1, tags: ["a", "b"] }, { id: 2, tags: [] }];
const text = JSON.stringify(data, null, 2);
console.log(text);
console.log(JSON.stringify(JSON.parse(text)) === JSON.stringify(data));
