// Number.parseInt with explicit radixes.
console.log(Number.parseInt("ff", 16));
console.log(Number.parseInt("FF", 16));
console.log(Number.parseInt("0xff", 16));
console.log(Number.parseInt("0xff"));
console.log(Number.parseInt("0Xa"));
console.log(Number.parseInt("101", 2));
console.log(Number.parseInt("102", 2));
console.log(Number.parseInt("777", 8));
console.log(Number.parseInt("z", 36));
console.log(Number.parseInt("Zz", 36));
console.log(Number.parseInt("10", 36));
console.log(Number.parseInt("12", 3));
console.log(Number.parseInt("-ff", 16));
console.log(Number.parseInt("0x", 16));
