// 'in' on a primitive with an object key: V8 shows the key unconverted ('#<Object>', '[object Array]').
for (const k of [{}, [1, 2], "s", 1, null, undefined, () => 1, new Map()]) {
  for (const o of [5, "str", null, undefined, true]) {
    try { console.log(k in o); } catch (e) { console.log(e.message); }
  }
}
