// expect: 4:17 Proxy
// anchor: Proxy
// Proxy is out.
const Wrapper = Proxy;
console.log(Wrapper);
