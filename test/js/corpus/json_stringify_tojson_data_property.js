// A toJSON property that is not a function is serialized like any other property.
console.log(JSON.stringify({ toJSON: 1, a: 2 }));
console.log(JSON.stringify({ nested: { toJSON: "x" } }));
console.log(JSON.stringify([{ toJSON: null }]));
