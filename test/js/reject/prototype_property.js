// expect: 5:6 prototype
// anchor: prototype
// Prototypes are out.
function Base() {}
Base.prototype.greet = () => "hi";
console.log(Base);
