// A thrown plain object that is not caught.
throw { code: 500, reason: "internal" };
