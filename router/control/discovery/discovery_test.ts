import assert from "node:assert/strict";
import { createJsonLogger } from "../../../shared/logger.ts";
import { ManualClock } from "../../../tests/_support/router/manual_clock.ts";
import type { BackendSource } from "./backend_source.ts";
import { Discovery, type MembershipChange, membershipChange } from "./discovery.ts";

const quiet = createJsonLogger({ level: "error", write: () => {} });

Deno.test("membershipChange() adds what is new and removes what vanished, ignoring trailing slashes", () => {
  assert.deepEqual(
    membershipChange(["http://a:1", "http://b:1/"], ["http://b:1", "http://c:1/"]),
    { added: ["http://c:1"], removed: ["http://a:1"] },
  );
  assert.deepEqual(membershipChange(["http://a:1"], ["http://a:1/"]), { added: [], removed: [] });
});

class FakePool {
  members: string[] = [];
  urls = () => [...this.members];
  add = (url: string) => (this.members.push(url), true);
  remove = (url: string) => {
    this.members = this.members.filter((m) => m !== url);
    return true;
  };
}

Deno.test("Discovery keeps the pool equal to the source, keeps it when the source fails, reports changes", async () => {
  const clock = new ManualClock(0);
  let answer: string[] | Error = ["http://10.0.0.1:9001", "http://10.0.0.2:9001"];
  const source: BackendSource = {
    name: "fake",
    list: () => answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer),
  };
  const pool = new FakePool();
  const changes: MembershipChange[] = [];
  const discovery = new Discovery(source, pool, {
    clock,
    logger: quiet,
    intervalMs: 5000,
    onChange: (change) => changes.push(change),
  });
  await discovery.start();
  assert.deepEqual(pool.urls(), ["http://10.0.0.1:9001", "http://10.0.0.2:9001"]);
  answer = new Error("SERVFAIL");
  await clock.advance(5000);
  assert.equal(pool.urls().length, 2);
  answer = ["http://10.0.0.2:9001", "http://10.0.0.3:9001"];
  await clock.advance(5000);
  assert.deepEqual(pool.urls(), ["http://10.0.0.2:9001", "http://10.0.0.3:9001"]);
  assert.deepEqual(changes, [
    { added: ["http://10.0.0.1:9001", "http://10.0.0.2:9001"], removed: [] },
    { added: ["http://10.0.0.3:9001"], removed: ["http://10.0.0.1:9001"] },
  ]);
  await discovery.stop();
  assert.equal(clock.pendingTimers, 0);
});
