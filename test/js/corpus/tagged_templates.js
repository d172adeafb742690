// Tagged templates: the tag gets the site's frozen strings (with `raw`) and the values; a
// site gives the same strings object every time it runs.
function show(strings, ...values) {
  return {
    strings: [...strings],
    raw: [...strings.raw],
    values,
    frozen: Object.isFrozen(strings) && Object.isFrozen(strings.raw),
  };
}
console.log(show`a${1}b${2 + 3}c`);
console.log(show`line\nbreak \u0041 \` ${"x"}`);
console.log(show``);

const seen = [];
const keep = (strings) => seen.push(strings);
for (let i = 0; i < 2; i++) keep`x${i}y`;
keep`x${0}y`;
console.log(seen[0] === seen[1], seen[0] === seen[2], Array.isArray(seen[0]), seen[0].length);
console.log(Object.keys(seen[0]), Object.getOwnPropertyNames(seen[0]));
console.log(Object.getOwnPropertyDescriptor(seen[0], "raw"));
try {
  seen[0].push("more");
} catch (e) {
  console.log(e instanceof TypeError);
}

const greeter = {
  name: "sluice",
  hello(strings, who) {
    return `${strings[0]}${who}, from ${this.name}${strings[1]}`;
  },
};
console.log(greeter.hello`hello ${"world"}!`);

const escapeHtml = (strings, ...values) =>
  strings.reduce((out, piece, i) => {
    const value = i < values.length ? String(values[i]).replace(/[<>&]/g, (c) => `&#${c.charCodeAt(0)};`) : "";
    return out + piece + value;
  }, "");
console.log(escapeHtml`<p title="${"a<b"}">${"x & y"}</p>`);

const curried = (a) => (b) => a[0] + b[0];
console.log(curried`first``second`);

// `new tag`...`` constructs what the tag returns.
function Made(arg) {
  this.arg = arg;
}
const factory = (strings) => {
  Made.seen = strings[0];
  return Made;
};
const plain = new factory`first`;
const withArgument = new factory`second`("argument");
console.log(plain instanceof Made, plain.arg, withArgument.arg, Made.seen);
