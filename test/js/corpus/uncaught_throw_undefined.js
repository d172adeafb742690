// A thrown undefined.
throw undefined;
