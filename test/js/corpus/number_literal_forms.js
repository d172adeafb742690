// Numeric literal syntaxes.
console.log(0x1F, 0XFF, 0o17, 0O7, 0b101, 0B11);
console.log(1e3, 1E3, 1e+3, 1e-3, .5, 5., 0.0);

