// Accounts as closures with validation errors.
const account = (owner) => {
  let balance = 0;
  const history = [];
  const deposit = (amount) => {
    if (!(amount > 0)) throw new RangeError("deposit must be positive");
    balance += amount;
    history.push(["deposit", amount]);
    return balance;
  };
  const withdraw = (amount) => {
    if (amount > balance) throw new Error(`insufficient funds for ${owner}`);
    balance -= amount;
    history.push(["withdraw", amount]);
    return balance;
  };
  return { deposit, withdraw, report: () => ({ owner, balance, history }) };
};
const acc = account("ann");
acc.deposit(100);
acc.withdraw(30.5);
for (const op of [() => acc.withdraw(1000), () => acc.deposit(-5), () => acc.deposit(0.25)]) {
  try {
    console.log(op());
  } catch (e) {
    console.log(e.name + ": " + e.message);
  }
}
console.log(acc.report());
