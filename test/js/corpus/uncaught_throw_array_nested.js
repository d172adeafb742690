// An uncaught array holding nested objects is shown to depth 5: its first line is "[".
throw [1, "a", { b: [1, 2, { c: { d: 1 } }] }];
