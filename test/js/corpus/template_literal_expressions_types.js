// Template literal substitution converts with ToString.
const vals = [1, -0, 1e21, 0.1 + 0.2, null, undefined, true, "s", [1, [2]], {}, NaN];
for (const v of vals) console.log(`[${v}]`);
