// Case mapping beyond ASCII, including mappings that change length.
console.log("straße".toUpperCase());
console.log("ÉCOLE".toLowerCase());
console.log("ǅ".toLowerCase(), "ǅ".toUpperCase());
console.log("ﬁ".toUpperCase());
console.log("İ".toLowerCase().length);
console.log("ΑΒΓ".toLowerCase());
console.log("ΟΔΟΣ".toLowerCase());
console.log("привет".toUpperCase());
console.log("𐐀".toLowerCase() === "𐐨");
