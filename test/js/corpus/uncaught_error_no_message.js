// An uncaught Error created without a message.
throw new Error();
