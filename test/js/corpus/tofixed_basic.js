// toFixed with various digit counts.
console.log((1.5).toFixed(0));
console.log((2.5).toFixed(0));
console.log((3.14159).toFixed(2));
console.log((3.14159).toFixed(4));
console.log((10).toFixed(2));
console.log((0).toFixed(3));
console.log((123.456).toFixed(1));
console.log((-1.5).toFixed(0));
console.log((-2.345).toFixed(2));
console.log((0.000001).toFixed(7));
console.log((1e-10).toFixed(3));
console.log((42).toFixed());
