// Calling a class without new throws a TypeError.
class Service {
  start() {
    return 1;
  }
}
console.log("calling");
Service();
