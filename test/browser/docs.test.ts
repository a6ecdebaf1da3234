import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseUrl } from '../support/service.js';

/**
 * The reference page in a real browser: Debian's Chromium (installed by .ci/run when missing), driven by
 * playwright-core, against the local server. Skipped only on a developer machine without Chromium; in CI it
 * always runs.
 */
const CHROMIUM = '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI) throw new Error(`${CHROMIUM} is missing in CI (.ci/run installs it)`);

describe.skipIf(!available)('GET /docs in headless Chromium', () => {
  let context: BrowserContext;
  let profile: string;

  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), 'docs-browser-'));
    // A persistent context is how playwright takes a user data dir: a new, empty one per run.
    context = await chromium.launchPersistentContext(profile, {
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
  });

  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('renders the operation list, and POST /transfers shows its request fields', async () => {
    const page = await context.newPage();
    const requested: string[] = [];
    const refused: string[] = [];
    // What actually reached a server (a request the page's policy refuses never does).
    page.on('requestfinished', (request) => requested.push(request.url()));
    const failed: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource'))
        refused.push(message.text());
    });
    page.on('response', (response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    });
    const url = await baseUrl();
    await page.goto(`${url}/docs`);

    // The side menu lists the operations by summary once Redoc has loaded the document.
    const menuItem = page.locator('[role="menuitem"]', { hasText: 'Create a transfer' }).first();
    await menuItem.waitFor({ state: 'visible', timeout: 30_000 });
    for (const summary of ['List trades', 'Request a quote', 'Server time']) {
      await expect(page.locator('[role="menuitem"]', { hasText: summary }).first().isVisible()).resolves.toBe(true);
    }

    await menuItem.click();
    const operation = page.locator('[id="operation/postTransfers"]');
    await operation.waitFor({ state: 'visible', timeout: 15_000 });
    for (const field of ['from_participant_code', 'to_participant_code', 'asset', 'amount', 'client_transfer_id']) {
      await expect(operation.getByText(field, { exact: true }).first().isVisible(), field).resolves.toBe(true);
    }
    // Everything the page loaded came from the service itself; its policy refuses anything else, and nothing
    // the page needs was refused.
    expect(
      requested.filter(
        (address) => !address.startsWith(url) && !address.startsWith('blob:') && !address.startsWith('data:'),
      ),
    ).toEqual([]);
    expect(refused.filter((text) => !text.includes('cdn.redoc.ly'))).toEqual([]);
    expect(failed.filter((text) => !text.endsWith('/favicon.ico'))).toEqual([]);
  });
});
