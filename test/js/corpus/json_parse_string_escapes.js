// JSON.parse decodes every escape form.
const s = JSON.parse('"\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u0041 \\u00e9 \\ud83d\\ude00 \\ud800"');
console.log(s.length);
console.log(JSON.stringify(s));
console.log(JSON.parse('"\u2028"').length);
console.log(JSON.parse('"日本"'));
