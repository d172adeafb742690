// == and != with type coercion.
console.log(1 == "1", 0 == "", 0 == "0", "" == "0");
console.log(null == undefined, null == 0, undefined == 0, null == false);
console.log(true == 1, false == 0, true == "1", "true" == true);
console.log(NaN == NaN, [1] == "1", [] == 0, [0] == false);
console.log(1 != "1", null != undefined, "a" != "b");
const o = {};
console.log(o == o, o == {}, o == "[object Object]");
