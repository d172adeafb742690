// encodeURIComponent over ASCII and a few non-ASCII characters.
const out = [];
for (let c = 0; c < 128; c++) out.push(encodeURIComponent(String.fromCharCode(c)));
console.log(out.join(" "));
console.log(encodeURIComponent("\u0080\u07ff\u0800\uffff\ud800\udc00\udbff\udfff"));
