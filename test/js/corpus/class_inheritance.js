// extends and super: constructors, methods, fields after super(), builtins as parents.
class Animal {
  legs = 4;
  constructor(name) {
    this.name = name;
  }
  speak() {
    return `${this.name} makes a sound`;
  }
  get description() {
    return `${this.name} on ${this.legs} legs`;
  }
  static create(name) {
    return new this(name);
  }
}
class Bird extends Animal {
  legs = 2;
  constructor(name, song) {
    super(name);
    this.song = song;
  }
  speak() {
    return `${super.speak()}: ${this.song}`;
  }
}
class Parrot extends Bird {}
const b = new Bird("robin", "tweet");
const p = new Parrot("polly", "hello");
console.log(b, b.speak(), b.description);
console.log(p.speak(), p instanceof Parrot, p instanceof Bird, p instanceof Animal);
console.log(Parrot.create("kea") instanceof Parrot, Object.getPrototypeOf(Parrot) === Bird);
console.log(Parrot.name, Parrot, Bird);
class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.name = "HttpError";
    this.status = status;
  }
}
const e = new HttpError(404, "not found");
console.log(e instanceof HttpError, e instanceof Error, e.message, e.status, String(e));
class Stack extends Array {
  peek() {
    return this[this.length - 1];
  }
}
const s = new Stack();
s.push(1, 2, 3);
console.log(s.length, s.peek(), Array.isArray(s), s instanceof Stack);
class Registry extends Map {
  register(k) {
    this.set(k, this.size);
    return this;
  }
}
const r = new Registry().register("a").register("b");
console.log(r.get("b"), r.size, r instanceof Map);
class NoSuper extends Animal {
  constructor() {
    return { replaced: true };
  }
}
console.log(new NoSuper());
class Early extends Animal {
  constructor() {
    try {
      this.x = 1;
    } catch (err) {
      console.log(err.constructor.name, err.message);
    }
    super("late");
  }
}
console.log(new Early().name);
