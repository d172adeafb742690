// Well-formed JSON.stringify escapes lone surrogates as \udXXX.
console.log(JSON.stringify("\ud800"));
console.log(JSON.stringify("\udfff"));
console.log(JSON.stringify("a\ud83db"));
console.log(JSON.stringify("\ude00\ud83d"));
console.log(JSON.stringify("\ud83d\ude00"));
console.log(JSON.stringify({ "\udead": 1 }));
console.log(JSON.stringify("\ud83d\ud83d\ude00"));
