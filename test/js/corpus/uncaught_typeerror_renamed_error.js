// An uncaught TypeError renamed "Error" prints its constructor's name.
const e = new TypeError("bad input");
e.name = "Error";
throw e;
