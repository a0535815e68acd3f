/**
 * @module Debian's Chromium (`apt-get install -y chromium`) driven by playwright-core —
 * never a downloaded browser. The dashboard benchmark and the browser tests launch it here.
 */
import { type Browser, chromium } from "playwright-core";

/** Where Debian installs Chromium. */
export const CHROMIUM = "/usr/bin/chromium";

/** Launches headless Chromium. */
export function launchChromium(executablePath = CHROMIUM): Promise<Browser> {
  return chromium.launch({
    executablePath,
    args: ["--headless", "--no-sandbox", "--disable-gpu"],
  });
}
