// Relational comparisons between numbers, NaN and strings.
console.log(1 < 2, 2 < 1, 1 <= 1, 1 >= 2);
console.log(NaN < 1, NaN > 1, NaN <= NaN, NaN >= NaN);
console.log("10" < "9", 10 < 9, "10" < 9);
console.log("a" < "b", "B" < "a", "abc" < "abd", "ab" < "abc");
console.log(null < 1, null >= 0, undefined < 1, undefined >= 0);
console.log(-Infinity < -1e308, Infinity > 1e308);
console.log("" < "a", "Z" < "a", "é" > "z");
console.log(true > false, true >= 1);
