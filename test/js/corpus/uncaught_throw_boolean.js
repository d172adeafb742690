// A thrown boolean.
throw false;
