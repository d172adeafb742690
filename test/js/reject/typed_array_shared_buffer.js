// expect: 4:18 SharedArrayBuffer|typed array
// anchor: SharedArrayBuffer
// SharedArrayBuffer is out (ArrayBuffer, DataView and the typed arrays are in).
const view = new SharedArrayBuffer(4);
