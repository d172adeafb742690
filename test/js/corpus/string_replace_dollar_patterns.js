// Replacement strings interpret $$, $&, $` and $' even with a string pattern.
console.log("abc".replace("b", "[$&]"));
console.log("abc".replace("b", "$$"));
console.log("abc".replace("b", "$`"));
console.log("abc".replace("b", "$'"));
console.log("abc".replace("b", "$1"));
console.log("abc".replace("b", "$"));
console.log("a-b-c".replaceAll("-", "<$&>"));
console.log("price".replace("price", "$$5"));
