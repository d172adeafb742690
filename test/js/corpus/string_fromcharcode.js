// String.fromCharCode builds strings from code units.
console.log(String.fromCharCode(72, 105));
console.log(String.fromCharCode());
console.log(String.fromCharCode(0xd83d, 0xde00));
console.log(String.fromCharCode(65 + 65536));
console.log(String.fromCharCode(-1).charCodeAt(0));
console.log(String.fromCharCode(97.9));
console.log(String.fromCharCode("66"));
console.log(String.fromCharCode(233, 0x4e2d));
