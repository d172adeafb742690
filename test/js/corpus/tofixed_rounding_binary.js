// toFixed rounds the exact binary value, so some halves go down.
console.log((1.005).toFixed(2));
console.log((1.045).toFixed(2));
console.log((1.255).toFixed(2));
console.log((8.345).toFixed(2));
console.log((0.5).toFixed(0));
console.log((1.45).toFixed(1));
console.log((1.55).toFixed(1));
console.log((2.675).toFixed(2));
console.log((0.125).toFixed(2));
console.log((0.375).toFixed(2));
console.log((-0.5).toFixed(0));
console.log((-1.005).toFixed(2));
