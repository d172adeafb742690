// split followed by join restores the string.
const cases = ["a,b,c", ",,", "", "no-sep", ",lead", "trail,", "é,😀,日"];
for (const c of cases) {
  const parts = c.split(",");
  console.log(JSON.stringify(c), parts.length, parts.join(",") === c);
}
