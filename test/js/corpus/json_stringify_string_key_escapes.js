// Keys are escaped like string values.
console.log(JSON.stringify({ "a\nb": 1, "\\": 2, "\u0007": 3, "\ud800": 4 }));
