// Only JSON white space is allowed around tokens.
console.log(JSON.parse(' \n{ "a" :\t[ 1 , 2 ] }\r\n'));
try {
  JSON.parse("\u00a01");
} catch (e) {
  console.log(e.name + ": " + e.message);
}
try {
  JSON.parse("1\u2028");
} catch (e) {
  console.log(e.name + ": " + e.message);
}
