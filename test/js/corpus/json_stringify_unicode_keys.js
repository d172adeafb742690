// Unicode keys are emitted unescaped.
console.log(JSON.stringify({ "日本": 1, "é": 2, "😀": 3 }));
console.log(JSON.stringify({ "\u007f": 1, "\u0010": 2 }));
