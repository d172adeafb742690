// Date's constructor forms, Date.UTC, getters and setters (local time is UTC here).
const t = Date.UTC(2024, 1, 29, 13, 45, 30, 123);
const d = new Date(t);
console.log(d.getFullYear(), d.getMonth(), d.getDate(), d.getDay(), d.getHours(), d.getMinutes(), d.getSeconds(), d.getMilliseconds());
console.log(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCDay(), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds());
console.log(d.getTimezoneOffset(), d.getYear(), d.getTime(), d.valueOf(), new Date(NaN).getDate());
const e = new Date(t);
console.log(e.setFullYear(2025), e.setMonth(13), e.setDate(0), e.setHours(25, 61), e.setMinutes(-1));
console.log(e.setSeconds(3600), e.setMilliseconds(1500), e.toISOString());
console.log(e.setUTCFullYear(2000, 0, 1), e.setUTCHours(0, 0, 0, 0), e.setTime(86400000), e);
console.log(e.setTime(NaN), e, e.setHours(1), e.setFullYear(2001), e);
console.log(new Date(2024, 0), new Date(99, 11, 31), new Date(2024, 0, 1, 12, 30, 15, 500), new Date(1e20), new Date("x"));
console.log(Date.UTC(2024), Date.UTC(), Date.UTC(1970, 0, 1), Date.UTC(-1, 0), Date.UTC(275760, 8, 13), Date.UTC(275760, 8, 14));
console.log(new Date(new Date(5)).getTime(), new Date(true).getTime(), typeof Date(), typeof Date.now(), Date.now() > 1.7e12);
const start = new Date(Date.UTC(2024, 0, 31));
start.setMonth(1);
console.log(start.toISOString(), new Date(Date.UTC(2023, 1, 29)).toISOString());
