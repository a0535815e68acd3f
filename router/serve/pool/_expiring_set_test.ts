import assert from "node:assert/strict";
import { ExpiringSet } from "./_expiring_set.ts";

Deno.test("ExpiringSet.has() is true until the entry expires", () => {
  const set = new ExpiringSet(4);
  set.add("a", 100);
  assert.equal(set.has("a", 99), true);
  assert.equal(set.has("a", 100), false);
  assert.equal(set.size, 0);
});

Deno.test("ExpiringSet never holds more than its capacity, evicting the oldest", () => {
  const set = new ExpiringSet(3);
  for (const name of ["a", "b", "c", "d"]) set.add(name, 1000);
  assert.equal(set.size, 3);
  assert.equal(set.has("a", 0), false);
  assert.equal(set.has("d", 0), true);
  set.add("b", 1000); // re-adding refreshes b's age
  set.add("e", 1000);
  assert.equal(set.has("c", 0), false);
  assert.equal(set.has("b", 0), true);
});

Deno.test("ExpiringSet rejects a capacity below 1", () => {
  assert.throws(() => new ExpiringSet(0), RangeError);
});
