// A thrown string that is not caught (node prints it unquoted).
throw "plain string";
