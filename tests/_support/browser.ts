/**
 * @module Test support: Debian's Chromium (`apt-get install -y chromium`) driven by
 * playwright-core — never a downloaded browser. Tests skip without it, except under
 * `CI`, where a missing browser is an error.
 */
import { type Browser, chromium } from "playwright-core";

/** Where Debian installs Chromium. */
export const CHROMIUM = "/usr/bin/chromium";

/** Whether Chromium is installed; throws under `CI` when it is not. */
export async function chromiumForTest(test: string): Promise<boolean> {
  const present = await Deno.stat(CHROMIUM).then((info) => info.isFile, () => false);
  if (!present && Deno.env.get("CI")) {
    throw new Error(`Cannot run ${test}: ${CHROMIUM} is missing (apt-get install -y chromium)`);
  }
  return present;
}

/** Launches headless Chromium. */
export function launchChromium(executablePath = CHROMIUM): Promise<Browser> {
  return chromium.launch({
    executablePath,
    args: ["--headless", "--no-sandbox", "--disable-gpu"],
  });
}
