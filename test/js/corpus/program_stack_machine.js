// A tiny stack machine interpreter.
const run = (program) => {
  const stack = [];
  for (const ins of program.split(" ")) {
    switch (ins) {
      case "+":
        stack.push(stack.pop() + stack.pop());
        break;
      case "*":
        stack.push(stack.pop() * stack.pop());
        break;
      case "-": {
        const b = stack.pop();
        stack.push(stack.pop() - b);
        break;
      }
      case "dup":
        stack.push(stack[stack.length - 1]);
        break;
      default:
        stack.push(Number.parseFloat(ins));
    }
  }
  return stack;
};
console.log(run("1 2 + 3 *"), run("5 dup * 1 -"), run("0.1 0.2 +"));
