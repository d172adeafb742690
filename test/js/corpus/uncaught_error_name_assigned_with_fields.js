// An uncaught error given a name ending in "Error" and an extra field: node shows the constructor, then the name.
throw Object.assign(new Error("upstream timed out"), { name: "TimeoutError", status: 504 });
