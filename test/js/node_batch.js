// node_batch.js: run many subset scripts in one node process, the way `node FILE` would,
// and report each one's stdout.
//
// Starting node costs about 0.1 s on this machine, so hundreds of `node FILE` runs would
// eat the test budget. Each script here is compiled as node's CommonJS loader compiles it
// (the same function wrapper, in the main context) with a console of its own whose stream
// collects the bytes: console.log goes through the same formatter as on a pipe. A script
// that throws is only marked `threw`: the Python side runs those again as `node FILE` to
// get node's own uncaught-exception report, so nothing here imitates node's stderr.
// test_corpus_node.py checks this runner against `node FILE` on a sample of the corpus.
//
// Usage: node node_batch.js JOBS.json RESULTS.json
//   JOBS.json:    [{"path": "...", "strict": false}, ...]
//   RESULTS.json: [{"path", "strict", "stdout_b64", "threw", "compile_error"}, ...]
// With "strict": true the body starts with "use strict", which the self-check uses to
// prove that a script behaves the same in strict mode (sluice treats all code as strict).
'use strict';

const fs = require('fs');
const vm = require('vm');
const { Console } = require('console');
const { Writable } = require('stream');

const [jobsPath, resultsPath] = process.argv.slice(2);
const jobs = JSON.parse(fs.readFileSync(jobsPath, 'utf8'));
const results = [];
const baseGlobals = new Set(Object.getOwnPropertyNames(globalThis));
// A script's promise jobs run before the next script starts (a macrotask later), and a
// rejection nobody handled marks it as one that threw, as `node FILE` would exit with it.
let current = null;
process.on('unhandledRejection', (e) => {
  if (current !== null) {
    current.threw = true;
    current.error = String(e && e.stack).split('\n').slice(0, 3).join(' | ');
  }
});

(async () => {
for (let index = 0; index < jobs.length; index++) {
  const job = jobs[index];
  process.stderr.write(`job ${index} ${job.path}\n`);
  const chunks = [];
  // Strings are encoded as a pipe encodes them (UTF-8, a lone surrogate as U+FFFD); the
  // callback runs at once, so every write lands in `chunks` before the next statement.
  const sink = new Writable({ write(chunk, encoding, done) { chunks.push(chunk); done(); } });
  const scriptConsole = new Console({ stdout: sink, stderr: sink });
  const result = { path: job.path, strict: !!job.strict, threw: false, compile_error: null };
  current = result;
  let fn = null;
  try {
    const src = fs.readFileSync(job.path, 'utf8');
    const prefix = job.strict ? '"use strict";' : '';
    const wrapped = '(function (exports, require, module, __filename, __dirname, console) {' +
      prefix + src + '\n})';
    fn = vm.runInThisContext(wrapped, { filename: job.path });
  } catch (e) {
    result.compile_error = String(e && e.message);
  }
  if (fn !== null) {
    const mod = { exports: {} };
    try {
      fn(mod.exports, require, mod, job.path, require('path').dirname(job.path), scriptConsole);
    } catch (e) {
      result.threw = true;
      result.error = String(e && e.stack).split('\n').slice(0, 3).join(' | ');
    }
  }
  await new Promise((resolve) => setImmediate(resolve));
  result.stdout_b64 = Buffer.concat(chunks).toString('base64');
  results.push(result);
  // A sloppy script may have created globals; they must not leak into the next one.
  for (const name of Object.getOwnPropertyNames(globalThis)) {
    if (!baseGlobals.has(name)) delete globalThis[name];
  }
}

current = null;
fs.writeFileSync(resultsPath, JSON.stringify(results));
})();
