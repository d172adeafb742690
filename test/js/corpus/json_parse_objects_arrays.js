// JSON.parse of objects and arrays.
console.log(JSON.parse('{"a":1,"b":[true,null,"x"],"c":{"d":{}}}'));
console.log(JSON.parse("[]"), JSON.parse("{}"), JSON.parse("[[],{}]"));
console.log(JSON.parse('[1, 2, 3]').length);
console.log(JSON.parse('{"b":1,"a":2,"2":3,"1":4}'));
console.log(JSON.parse('{"a":1,"a":2,"b":3}'));
