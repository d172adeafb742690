// The demo's JavaScript handler (`sluice demo`, `/hello`): answered inside sluice, with no
// backend; README.md's "JavaScript handlers" says how to write your own.
export default function hello(request) {
  const name = request.query.name ?? "world";
  return Response.text(`hello, ${name}, from a JavaScript handler (you asked for ${request.path})\n`);
}
