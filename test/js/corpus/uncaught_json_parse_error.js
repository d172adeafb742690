// An uncaught SyntaxError from JSON.parse.
console.log("parsing");
JSON.parse('{"a": 1,}');
