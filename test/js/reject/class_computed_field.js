// expect: 5:3 computed class field
// anchor: [
// Computed class field names are out for now (computed method names are in).
class Table {
  ["col" + 1] = 0;
}
console.log(new Table());
