"use strict";
// Private generator, async and async generator methods (instance and static): callable
// through the class, with their own `this`, and not visible from outside.
class Feed {
  #items = ["a", "b", "c"];
  *#each() {
    for (const x of this.#items) yield x;
  }
  async #load(x) {
    await null;
    return x.toUpperCase();
  }
  async *#stream() {
    for (const x of this.#each()) yield await this.#load(x);
  }
  static *#range(n) {
    for (let i = 0; i < n; i++) yield i;
  }
  static async *#ticks(n) {
    for (const i of Feed.#range(n)) yield i * 10;
  }
  list() { return [...this.#each()]; }
  async all() {
    const out = [];
    for await (const x of this.#stream()) out.push(x);
    return out;
  }
  static async ticks(n) {
    const out = [];
    for await (const x of Feed.#ticks(n)) out.push(x);
    return out;
  }
  static has(o) { return #each in o; }
}
const f = new Feed();
console.log(f.list(), Feed.has(f), Feed.has({}), Object.keys(f), Object.getOwnPropertyNames(Feed.prototype));
f.all().then((all) => console.log("all", all));
Feed.ticks(3).then((t) => console.log("ticks", t));
