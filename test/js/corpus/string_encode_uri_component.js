// encodeURIComponent escapes all but unreserved characters.
console.log(encodeURIComponent("hello world"));
console.log(encodeURIComponent("a+b=c&d"));
console.log(encodeURIComponent("-_.!~*'()"));
console.log(encodeURIComponent("é日😀"));
console.log(encodeURIComponent("/?:@#[]$,;"));
console.log(encodeURIComponent(""));
console.log(encodeURIComponent(123));
console.log(encodeURIComponent("\n\t%"));
