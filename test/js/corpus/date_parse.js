// Date.parse and new Date(string): ISO 8601 (a date alone and a date-time both UTC here),
// RFC 7231 and RFC 2822 dates, and the other forms node reads.
const texts = [
  "2024-01-02", "2024-01", "2024", "2024-01-02T03:04", "2024-01-02T03:04:05.678Z",
  "2024-01-02T03:04:05.6789+05:30", "+002024-01-02T00:00:00Z", "-000001-01-01T00:00:00Z",
  "2024-02-30", "2024-13-01", "2024-01-02T24:00", "2024-01-02T24:01", "2024-1-2",
  "Tue, 02 Jan 2024 03:04:05 GMT", "Tue, 2 Jan 2024 03:04:05 +0100",
  "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
  "Jan 2, 2024", "January 2, 2024 10:00:00", "2 Jan 2024", "1/2/2024", "12/31/1999 11:59 PM",
  "2024/01/02 10:20:30", "2024-01-02 10:20:30", "2024-01-02 10:20:30Z",
  "Tue Jan 02 2024 03:04:05 GMT+0000 (Coordinated Universal Time)",
  "Thu, 01 Jan 1970 00:00:00 GMT-0500", "", "garbage", "2024-01-02T03:04:05+0100", "12:00",
  "Jan 2024", "2024 Jan 2", "Mon, 15 Aug 2005 15:52:01 +0000", "2024-01-02t03:04:05z",
];
for (const text of texts) console.log(JSON.stringify(text), Date.parse(text), new Date(text).getTime());
const now = new Date();
console.log(Date.parse(now.toUTCString()) === Math.floor(now.getTime() / 1000) * 1000);
console.log(Date.parse(now.toISOString()) === now.getTime(), Date.parse(String(now)) === Math.floor(now.getTime() / 1000) * 1000);
