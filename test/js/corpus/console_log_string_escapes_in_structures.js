// Control characters and backslashes are escaped inside structures.
console.log(["line\nbreak", "tab\there", "back\\slash", "nul\u0000", "bell\u0007", "del\u007f"]);
console.log({ k: "\r\n" });
console.log(["\u001b[31m"]);
console.log(["é日😀"]);
console.log(["\u2028"]);
