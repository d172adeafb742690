// expect: 4:6 var
// anchor: var
// `var` in a for head is out as well.
for (var i = 0; i < 3; i++) {
  console.log(i);
}
