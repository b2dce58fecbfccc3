import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium (`apt-get install chromium`; .ci/run installs it), driven by playwright-core.
 * Playwright gives every launch a fresh, empty profile directory of its own (--user-data-dir).
 */
export const CHROMIUM_PATH = '/usr/bin/chromium';

export function chromiumAvailability(): { enabled: boolean; reason: string } {
  if (existsSync(CHROMIUM_PATH)) return { enabled: true, reason: '' };
  if (process.env['CI'] === 'true') return { enabled: true, reason: '' }; // Under CI the specs run, and fail without it.
  return { enabled: false, reason: `browser specs skipped: ${CHROMIUM_PATH} is missing (apt-get install -y chromium); under CI=true they run` };
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
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
