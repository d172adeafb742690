// Timers under async functions: a sleep that awaits a timer, several at once with
// Promise.all and Promise.race, arguments passed through, and timers set from timers.
const sleep = (ms, value) => new Promise((resolve) => setTimeout(resolve, ms, value));

async function worker(name, delays) {
  for (const ms of delays) {
    await sleep(ms);
    console.log(name, "woke after", ms);
  }
  return name + " done";
}

async function main() {
  console.log("start");
  const results = await Promise.all([worker("w1", [10, 40]), worker("w2", [25, 60])]);
  console.log(results.join(", "));
  const first = await Promise.race([sleep(60, "slow"), sleep(10, "fast")]);
  console.log("race won by", first);
  setTimeout((x, y, z) => console.log("args:", x, y, z), 2, 1, "two", [3]);
  await sleep(10);
  let depth = 0;
  await new Promise((resolve) => {
    const again = () => {
      depth++;
      if (depth < 5) setTimeout(again, 1); else resolve();
    };
    setTimeout(again, 1);
  });
  console.log("nested timers ran", depth, "times");
  try {
    await new Promise((_, reject) => setTimeout(() => reject(new Error("timed out")), 3));
  } catch (e) {
    console.log("caught:", e.message);
  }
  return "main done";
}

main().then((v) => console.log(v));
console.log("main returned a promise");
