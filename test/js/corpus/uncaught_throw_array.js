// A thrown array that is not caught.
throw [1, "two", null];
