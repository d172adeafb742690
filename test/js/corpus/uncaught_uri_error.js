// An uncaught URIError from decodeURIComponent.
console.log(decodeURIComponent("%41"));
decodeURIComponent("%E0%A4%A");
