// Palindrome checks with reverse and comparison.
const isPal = (s) => {
  const clean = s.toLowerCase().split(" ").join("");
  return clean === clean.split("").reverse().join("");
};
for (const w of ["racecar", "A man a plan a canal Panama", "hello", "", "ab"]) {
  console.log(JSON.stringify(w), isPal(w));
}
