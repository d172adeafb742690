// expect: 4:15 lookbehind assertions
// anchor: /(?<=\$)\d+/
// Lookbehind is refused by name, as lookahead is.
const price = /(?<=\$)\d+/;
console.log(price.exec("$42"));
