// test262_node.js: node 20 as the oracle for test262's runtime tests. Each job is one test
// made into one script (test262's own harness files, then the test, in strict mode); it runs
// in a fresh vm context of its own, as test262's hosts run each test in a fresh realm, with
// `print` for the async tests. The result is node's verdict on the test, judged by test262's
// rules (INTERPRETING.md): a negative test passes when it fails in the named phase with the
// named error, an async test when it prints Test262:AsyncTestComplete.
//
// Usage: node test262_node.js JOBS.json RESULTS.json
//   JOBS.json:    [{"id", "source", "negative": {"phase", "type"} | null, "async": bool}, ...]
//   RESULTS.json: {id: "pass" | "fail: reason"}
'use strict';

const fs = require('fs');
const vm = require('vm');

const [jobsPath, resultsPath] = process.argv.slice(2);
const jobs = JSON.parse(fs.readFileSync(jobsPath, 'utf8'));
const results = {};
const timeoutMs = 5000;

function errorName(e) {
  try {
    if (e !== null && (typeof e === 'object' || typeof e === 'function') && e.constructor) return e.constructor.name;
  } catch (_) { /* a throwing getter: no name */ }
  return typeof e;
}

async function runJob(job) {
  const printed = [];
  const context = vm.createContext({ print: (m) => printed.push(String(m)) });
  let script;
  try {
    script = new vm.Script(job.source, { filename: job.id });
  } catch (e) {
    if (job.negative && (job.negative.phase === 'parse' || job.negative.phase === 'early')) {
      return errorName(e) === job.negative.type ? 'pass' : `fail: parse ${errorName(e)}`;
    }
    return `fail: does not compile: ${e}`;
  }
  if (job.negative && job.negative.phase !== 'runtime') return 'fail: compiled';
  try {
    script.runInContext(context, { timeout: timeoutMs });
  } catch (e) {
    if (job.negative) return errorName(e) === job.negative.type ? 'pass' : `fail: threw ${errorName(e)}`;
    return `fail: threw ${String(e).slice(0, 200)}`;
  }
  if (job.negative) return 'fail: did not throw';
  if (!job.async) return 'pass';
  // Let the test's promise jobs run: a few turns of the event loop.
  for (let i = 0; i < 20 && printed.length === 0; i++) await new Promise((r) => setImmediate(r));
  return printed.includes('Test262:AsyncTestComplete') ? 'pass' : `fail: async ${printed.join(' ').slice(0, 200)}`;
}

(async () => {
  for (const job of jobs) {
    try {
      results[job.id] = await runJob(job);
    } catch (e) {
      results[job.id] = `fail: runner ${e}`;
    }
  }
  fs.writeFileSync(resultsPath, JSON.stringify(results));
})();
