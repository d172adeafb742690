// replace and replaceAll with a replacer function.
console.log("a-b-c".replace("-", (m) => "[" + m + "]"));
console.log("a-b-c".replaceAll("-", (m, offset) => String(offset)));
console.log("xyz".replace("y", (m, offset, whole) => whole.length + ":" + offset));
