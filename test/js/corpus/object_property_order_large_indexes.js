// Keys up to 2^32 - 2 are array indexes; larger integer keys are ordinary strings.
const o = {};
o.z = 0;
o["4294967295"] = "max";
o["4294967294"] = "index max";
o["9007199254740993"] = "big";
o["5"] = "five";
o.a = 1;
console.log(Object.keys(o));
