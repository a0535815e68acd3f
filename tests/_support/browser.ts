/**
 * @module Test support: whether the browser tests can run. Tests skip without Debian's
 * Chromium (`tools/browser/chromium.ts` launches it), except under `CI`, where a missing
 * browser is an error.
 */
import { CHROMIUM } from "../../tools/browser/chromium.ts";

/** Whether Chromium is installed; throws under `CI` when it is not. */
export async function chromiumForTest(test: string): Promise<boolean> {
  const present = await Deno.stat(CHROMIUM).then((info) => info.isFile, () => false);
  if (!present && Deno.env.get("CI")) {
    throw new Error(`Cannot run ${test}: ${CHROMIUM} is missing (apt-get install -y chromium)`);
  }
  return present;
}
