import assert from "node:assert/strict";
import { assessContract, type ContractObservation } from "./capacity_contract.ts";

const T = 1_700_000_000_000;
const CONTRACT = { id: "c1", target: 8, readyBy: T };
const base: ContractObservation = {
  now: T - 600_000,
  ready: 2,
  pending: [],
  coldStartMs: 200_000,
  readyTimeoutMs: 900_000,
};

Deno.test("assessContract(): pending requests that arrive before the deadline are on track", () => {
  const a = assessContract(CONTRACT, { ...base, pending: Array(6).fill(T - 700_000) });
  assert.equal(a.status, "on_track");
  assert.equal(a.shortfall, 6);
  assert.equal(a.expectedReadyAt, T - 500_000);
});

Deno.test("assessContract(): requests too late, too few or none are at risk", () => {
  const late = assessContract(CONTRACT, { ...base, pending: Array(6).fill(T - 100_000) });
  assert.equal(late.status, "at_risk");
  assert.equal(late.expectedReadyAt, T + 100_000);
  assert.match(late.message, /will miss its deadline .*expected ready/);
  const few = assessContract(CONTRACT, { ...base, pending: [T - 700_000] });
  assert.equal(few.status, "at_risk");
  assert.equal(few.expectedReadyAt, Infinity);
  assert.match(few.message, /5 not requested or not coming/);
});

Deno.test("assessContract(): a passed deadline short of the target is missed; the target ready is ready", () => {
  const missed = assessContract(CONTRACT, { ...base, now: T, ready: 7, pending: [T - 60_000] });
  assert.equal(missed.status, "missed");
  assert.match(missed.message, /missed its deadline .*7 of 8 backends ready/);
  const ready = assessContract(CONTRACT, { ...base, ready: 8 });
  assert.deepEqual([ready.status, ready.shortfall, ready.expectedReadyAt], ["ready", 0, null]);
});

Deno.test("assessContract(): a request pending past the ready timeout is stuck and covers nothing", () => {
  const a = assessContract(CONTRACT, {
    ...base,
    pending: [...Array(5).fill(T - 700_000), T - 2_000_000],
  });
  assert.equal(a.stuck, 1);
  assert.equal(a.status, "at_risk");
  assert.match(a.message, /1 requested backend\(s\) never became ready/);
});
