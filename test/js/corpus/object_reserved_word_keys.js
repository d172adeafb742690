// Reserved words are allowed as property names.
const o = { if: 1, class: 2, function: 3, new: 4, return: 5, typeof: 6, var: 7, this: 8 };
console.log(o.if + o.class + o.function + o.new + o.return + o.typeof + o.var + o.this);
console.log(Object.keys(o).join(","));
