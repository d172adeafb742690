// Checking balanced brackets with a stack.
const pairs = { ")": "(", "]": "[", "}": "{" };
const balanced = (s) => {
  const st = [];
  for (const ch of s) {
    if (ch === "(" || ch === "[" || ch === "{") st.push(ch);
    else if (ch in pairs) {
      if (st.pop() !== pairs[ch]) return false;
    }
  }
  return st.length === 0;
};
for (const s of ["()", "([]{})", "(]", "((", "", "a(b[c]d)e", "}{"]) console.log(JSON.stringify(s), balanced(s));
