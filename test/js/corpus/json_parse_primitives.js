// JSON.parse of primitive texts.
console.log(JSON.parse("1"), JSON.parse("-0"), JSON.parse("1.5e3"), JSON.parse("1E-2"));
console.log(JSON.parse('"s"'), JSON.parse("true"), JSON.parse("false"), JSON.parse("null"));
console.log(JSON.parse(" \t\n\r 7 \n"));
console.log(JSON.parse("1e400"), JSON.parse("-1e400"), JSON.parse("1e-400"));
console.log(JSON.parse("123456789012345678901234567890"));
console.log(JSON.parse("0.1"), JSON.parse("-0.0"));
