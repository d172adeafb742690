// node_parse_check.js: does node's parser accept each file, as strict code?
//
// Usage: node --experimental-vm-modules node_parse_check.js FILES.json RESULTS.json
//   FILES.json:   [{"path": "...", "module": false}, ...]
//   RESULTS.json: [{"path": "...", "ok": true, "error": null}, ...]
// A script is compiled with "use strict" in front (sluice treats all code as strict) and
// never run; a module is compiled as a module (modules are strict anyway) and never linked.
'use strict';

const fs = require('fs');
const vm = require('vm');

const [filesPath, resultsPath] = process.argv.slice(2);
const files = JSON.parse(fs.readFileSync(filesPath, 'utf8'));
const results = [];
for (const f of files) {
  const src = fs.readFileSync(f.path, 'utf8');
  let error = null;
  try {
    if (f.module) {
      new vm.SourceTextModule(src, { identifier: f.path });
    } else {
      new vm.Script('"use strict";' + src, { filename: f.path });
    }
  } catch (e) {
    error = String(e && e.message);
  }
  results.push({ path: f.path, ok: error === null, error });
}
fs.writeFileSync(resultsPath, JSON.stringify(results));
