// AggregateError: the constructor (errors from any iterable, message, cause), its prototype chain, and Promise.any's rejection being one.
const e = new AggregateError([1, 2], "msg", { cause: "c" });
console.log(e.name, e.message, e.errors, e.cause, e instanceof Error, e instanceof AggregateError, Object.keys(e));
console.log(Object.getOwnPropertyDescriptor(e, "errors").enumerable, e.hasOwnProperty("errors"));
console.log(String(e), AggregateError.length, AggregateError.name, Object.getPrototypeOf(AggregateError.prototype) === Error.prototype);
console.log(AggregateError([3]).errors, JSON.stringify(new AggregateError(new Set([4])).message), new AggregateError("ab").errors);
Promise.any([Promise.reject(1), Promise.reject(2)]).catch((err) => console.log(err instanceof AggregateError, err.name, err.message, err.errors, err.constructor === AggregateError));
Promise.any([]).catch((err) => console.log("empty:", err instanceof AggregateError, err.errors));
try { new AggregateError(5); } catch (x) { console.log(x.constructor.name); }
