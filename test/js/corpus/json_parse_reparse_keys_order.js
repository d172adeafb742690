// Parsed objects follow property order rules, integer keys first.
const o = JSON.parse('{"z":1,"10":2,"a":3,"9":4,"-1":5}');
console.log(Object.keys(o));
console.log(JSON.stringify(o));
