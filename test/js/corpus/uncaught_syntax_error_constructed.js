// An uncaught SyntaxError built by the script.
throw new SyntaxError("handmade");
