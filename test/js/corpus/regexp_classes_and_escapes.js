// Character classes, class escapes, word boundaries and the character escapes.
const show = (re, s) => {
  const m = re.exec(s);
  console.log(String(re), JSON.stringify(s), m === null ? null : m[0], m === null ? -1 : m.index);
};
show(/[^\d\s]+/, "12 ab3");
show(/\D\W\S/, "a!b");
show(/\u00e9/, "café");
show(/\x41/, "BA");
show(/[\b]/, "a\bb");
show(/\cJ/, "a\nb");
show(/\bfoo\b/, "a foo b");
show(/\Boo/, "foo");
show(/[.]/, "a.b");
show(/[\]]/, "a]b");
show(/[-a]/, "b-");
show(/\0/, "a\0b");
show(/\//, "a/b");
show(/[^]/, "\n");
show(/[]/, "a");
show(/[\s\S]+?c/, "ab\ncd");
show(/\w+/, "été");
show(/[\u0041-\u005A]+/, "xxABCyy");
show(/\t\v\f/, "x\t\v\fy");
show(/a{0}/, "a");
show(/(a{0,1}){2}/, "a");
show(/{/, "a{b");
show(/a{,2}/, "a{,2}");
show(/]/, "]");
