// A method taken off its object and called alone: console.log stays bound, the others throw
// TypeErrors worded as V8 words each builtin's.
for (const m of ["at","concat","entries","every","fill","filter","find","findIndex","findLast","findLastIndex","flat","flatMap","forEach","includes","indexOf","join","keys","lastIndexOf","map","pop","push","reduce","reduceRight","reverse","shift","slice","some","sort","splice","unshift","values","toSorted","toReversed","with"]) { try { const f = [][m]; f(() => 1); } catch (e) { console.log(m, e.message); } }
for (const m of ["get","set","has","delete","clear","forEach","keys","values","entries"]) { try { const f = new Map()[m]; f(() => 1); } catch (e) { console.log(m, e.message); } }
for (const m of ["add","has","delete","clear","forEach","keys","values","entries"]) { try { const f = new Set()[m]; f(() => 1); } catch (e) { console.log(m, e.message); } }
const log = console.log; log("bound log works", 1);
const { log: l2 } = console; l2("destructured");
