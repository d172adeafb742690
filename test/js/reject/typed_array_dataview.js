// expect: 4:18 DataView|typed array
// anchor: DataView
// DataView is out (the typed arrays and ArrayBuffer are in).
const view = new DataView(new ArrayBuffer(4));
console.log(view);
