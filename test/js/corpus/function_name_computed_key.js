// An anonymous arrow defined under a computed key takes the key as its name; a function
// that already exists keeps its own.
const prefix = "on";
const handlers = {
  [prefix + "Click"]: () => "clicked",
  [prefix + "Load"]: (event) => event,
  [42]: () => 42,
  [1.5]: () => 1.5,
  plain: () => "plain",
};
for (const key of Object.keys(handlers)) {
  console.log(key, JSON.stringify(handlers[key].name));
}
console.log(handlers);
const existing = () => 1;
const alias = { [prefix]: existing };
console.log(alias.on.name, alias);
const list = [() => 2];
const fromList = { [prefix]: list[0] };
console.log(JSON.stringify(fromList.on.name), fromList);
const routes = Object.fromEntries(["get", "put"].map((m) => [m, () => m]));
console.log(routes, routes.get.name === "");
