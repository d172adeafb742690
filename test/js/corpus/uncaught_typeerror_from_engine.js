// An engine TypeError that nobody catches.
console.log("start");
const config = { server: null };
console.log(config.server.port);
