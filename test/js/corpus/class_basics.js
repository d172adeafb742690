// Classes: constructor, methods, fields, static members, accessors, and how they print.
class Point {
  x = 0;
  y = 0;
  static created = 0;
  constructor(x, y) {
    this.x = x;
    this.y = y;
    Point.created++;
  }
  get length() {
    return Math.hypot(this.x, this.y);
  }
  set length(n) {
    const k = n / this.length;
    this.x *= k;
    this.y *= k;
  }
  plus(other) {
    return new Point(this.x + other.x, this.y + other.y);
  }
  toString() {
    return `(${this.x}, ${this.y})`;
  }
  static origin() {
    return new Point(0, 0);
  }
}
const p = new Point(3, 4);
console.log(p, p.length, String(p), `${p.plus(new Point(1, 1))}`);
p.length = 10;
console.log(p.x, p.y, Point.created, Point.origin());
console.log(typeof Point, Point.name, Point.length, Object.keys(p), Object.keys(Point.prototype));
console.log(p instanceof Point, Object.getPrototypeOf(p) === Point.prototype, Point.prototype.constructor === Point);
console.log(Object.getOwnPropertyNames(Point.prototype));
const Anon = class {
  hi() {
    return "hi";
  }
};
console.log(Anon.name, new Anon().hi(), Anon);
class Counter {
  count = 0;
  step = this.count + 2;
  inc = () => {
    this.count += this.step;
    return this;
  };
  static {
    Counter.ready = true;
  }
}
const c = new Counter();
console.log(c.inc().inc().count, Counter.ready, JSON.stringify(c));
try {
  Point(1, 2);
} catch (e) {
  console.log(e instanceof TypeError, e.message);
}
class Computed {
  ["a" + 1]() {
    return 1;
  }
  static s2 = 3;
  get [`g${3}`]() {
    return 4;
  }
}
console.log(new Computed().a1(), Computed.s2, new Computed().g3, Object.getOwnPropertyNames(Computed.prototype));
