/**
 * The Chromium the browser tests drive (playwright-core, no bundled browser): the system's
 * (`/usr/bin/chromium`, or `CHROMIUM_PATH`), headless, without the sandbox, the GPU or anything
 * that would reach the network on its own.
 */
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
