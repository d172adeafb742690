// Math.clz32, Math.imul and Math.fround.
console.log(Math.clz32(1), Math.clz32(0), Math.clz32(-1), Math.clz32(0.5));
console.log(Math.imul(3, 4), Math.imul(-5, 12), Math.imul(4294967295, 5));
console.log(Math.fround(5.5), Math.fround(5.05), Math.fround(1e40));
