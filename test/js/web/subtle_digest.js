"use strict";
// crypto.subtle.digest through the TLS library: SHA-1/256/384/512 of typed arrays and buffers.
const hex = (b) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, "0")).join("");
const data = new TextEncoder().encode("hello, sluice");
const show = (p) => p.then((b) => console.log(b instanceof ArrayBuffer, b.byteLength, hex(b)), (e) => console.log("rejected", e.name, e.code, e.message));
async function main() {
  for (const name of ["SHA-1", "SHA-256", "SHA-384", "SHA-512", "sha-256", { name: "SHA-256" }]) await show(crypto.subtle.digest(name, data));
  await show(crypto.subtle.digest("SHA-256", data.buffer));
  await show(crypto.subtle.digest("SHA-256", new Uint8Array(0)));
  await show(crypto.subtle.digest("SHA-256", new Uint32Array([1, 2, 3])));
  await show(crypto.subtle.digest("SHA-256", data.subarray(2, 5)));
  await show(crypto.subtle.digest("MD5", data));
  await show(crypto.subtle.digest({}, data));
  const p = crypto.subtle.digest("SHA-1", data);
  console.log(p instanceof Promise);
  console.log(hex(await crypto.subtle.digest("SHA-512", new Uint8Array(100000).fill(97))));
}
main();
