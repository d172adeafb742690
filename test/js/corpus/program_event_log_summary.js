// Summarising a log of events.
const events = [
  { t: 1, type: "req", ms: 12 },
  { t: 2, type: "req", ms: 30 },
  { t: 3, type: "err", code: 502 },
  { t: 4, type: "req", ms: 7 },
  { t: 5, type: "err", code: 504 },
];
const reqs = events.filter((e) => e.type === "req");
const errs = events.filter((e) => e.type === "err");
const summary = {
  requests: reqs.length,
  avg_ms: reqs.reduce((s, e) => s + e.ms, 0) / reqs.length,
  max_ms: reqs.reduce((m, e) => Math.max(m, e.ms), 0),
  error_codes: errs.map((e) => e.code),
};
console.log(summary);
console.log(JSON.stringify(summary, null, 2));
