// ! converts to boolean and negates.
console.log(!0, !1, !"", !"0", !null, !undefined, !NaN, ![], !{});
console.log(!!0, !!"x", !!-0, !!0.1);
