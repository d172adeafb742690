// charAt returns "" out of range and code units inside.
const s = "héllo😀";
console.log(JSON.stringify(s.charAt(0)));
console.log(JSON.stringify(s.charAt(1)));
console.log(JSON.stringify(s.charAt(5)));
console.log(JSON.stringify(s.charAt(6)));
console.log(JSON.stringify(s.charAt(7)));
console.log(JSON.stringify(s.charAt(-1)));
console.log(JSON.stringify(s.charAt()));
console.log(JSON.stringify(s.charAt(1.9)));
