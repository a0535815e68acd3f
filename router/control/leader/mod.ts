/** @module The leader lease: one router runs the control loops (see `leader_elector.ts`). */
export { decideLease, leads, type Lease } from "./lease.ts";
export {
  KvLeaseStore,
  LEASE_KEY,
  type LeaseStore,
  type TermRecord,
  TERMS_PREFIX,
} from "./lease_store.ts";
export { LeaderElector, type LeaderStatus } from "./leader_elector.ts";
