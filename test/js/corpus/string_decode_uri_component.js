// decodeURIComponent reverses percent-encoding.
console.log(decodeURIComponent("hello%20world"));
console.log(decodeURIComponent("%C3%A9%E6%97%A5%F0%9F%98%80"));
console.log(decodeURIComponent("a%2Bb"));
console.log(decodeURIComponent("%2f%3F"));
console.log(decodeURIComponent("no-escapes"));
console.log(decodeURIComponent("%25"));
