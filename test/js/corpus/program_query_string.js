// Parsing and building query strings.
const parse = (qs) => {
  const out = {};
  for (const part of qs.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const k = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    const v = eq < 0 ? "" : decodeURIComponent(part.slice(eq + 1).replaceAll("+", " "));
    out[k] = k in out ? [].concat(out[k], v) : v;
  }
  return out;
};
const build = (o) => Object.entries(o).map(([k, v]) => encodeURIComponent(k) + "=" + encodeURIComponent(v)).join("&");
const q = parse("a=1&b=hello+world&a=2&c&d=%C3%A9&&e=x%3Dy");
console.log(q);
console.log(build({ name: "José", tags: "a,b", eq: "x=y" }));
