import { beforeAll, describe, expect, it, vi } from 'vitest';
import { sign } from '../../lib/http/signature.js';
import { AuthenticationError } from '../../lib/domain/errors.js';
import { createApiKey, KEY_ITEM_KEPT_FOR_READS_MS, revokeApiKey } from '../../lib/store/api-keys.js';
import { PERMISSION_AREAS } from '../../lib/domain/caller.js';
import { routes } from '../../infra/routes.js';
import { createPlatform, getPlatform } from '../../lib/store/platforms.js';
import { runAdmin } from '../../infra/ops/cli.js';
import { newPlatform, send, type TestPlatform } from '../support/service.js';
import { ctx } from '../support/context.js';

describe('GET /time', () => {
  it('answers without authentication, in seconds, milliseconds and ISO', async () => {
    const sentAtMs = Date.now();
    const response = await send('GET', '/time');
    const answeredAtMs = Date.now();
    expect(response.status).toBe(200);
    const { epoch, epoch_ms, iso_8601 } = response.body.message;
    expect(Number.isInteger(epoch)).toBe(true);
    // The server's time while the request was in flight, however long a loaded machine made it take.
    expect(epoch_ms).toBeGreaterThanOrEqual(sentAtMs);
    expect(epoch_ms).toBeLessThanOrEqual(answeredAtMs);
    expect(Math.floor(epoch_ms / 1000)).toBe(epoch);
    expect(new Date(iso_8601).getTime()).toBe(epoch_ms);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('echoes the client X-Request-Id', async () => {
    const response = await send('GET', '/time', undefined, { headers: { 'X-Request-Id': 'trace-123' } });
    expect(response.headers.get('x-request-id')).toBe('trace-123');
  });

  it('routes a trailing slash like the path without it', async () => {
    expect((await send('GET', '/time/')).status).toBe(200);
  });
});

describe('signed requests', () => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await newPlatform();
  });

  it('GET /assets lists the registry with precisions', async () => {
    const response = await platform.get('/assets');
    expect(response.status).toBe(200);
    const bySymbol = Object.fromEntries(response.body.message.map((asset: any) => [asset.symbol, asset.precision]));
    expect(bySymbol).toMatchObject({ USD: 2, EUR: 2, BTC: 8, ETH: 18, USDC: 6, SOL: 9 });
  });

  it('filters by symbol, signed with or without the query string', async () => {
    for (const signWithoutQuery of [false, true]) {
      const response = await platform.get('/assets?symbol=BTC', { signWithoutQuery });
      expect(response.status).toBe(200);
      expect(response.body.message).toEqual([expect.objectContaining({ symbol: 'BTC', precision: 8 })]);
    }
  });

  it('accepts an empty signed body for a request without one', async () => {
    const timestamp = String(ctx.clock.nowSeconds());
    const response = await send('GET', '/assets', undefined, {
      unsigned: true,
      headers: {
        'X-SVC-API-KEY': platform.credentials.api_key,
        'X-SVC-PASSPHRASE': platform.credentials.passphrase,
        'X-SVC-TIMESTAMP': timestamp,
        'X-SVC-SIGNED': sign(Buffer.from(platform.credentials.api_secret, 'base64'), timestamp, 'GET', '/assets', ''),
      },
    });
    expect(response.status, response.text).toBe(200);
  });

  it('answers a path parameter with broken percent-encoding with a 404, not a 500', async () => {
    const response = await platform.get('/transfers/%E0%A4%A');
    expect(response.status, response.text).toBe(404);
  });

  // Every authentication failure reads the same, so the answer tells a guesser nothing.
  const forbidden = (response: { status: number; body: any; headers: Headers }) => {
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ error: true, message: AuthenticationError.MESSAGE });
    expect(response.headers.get('x-request-id')).toBeTruthy();
  };

  it('refuses a request without headers', async () => {
    forbidden(await send('GET', '/assets'));
  });

  it('refuses a bad signature', async () => {
    forbidden(await platform.get('/assets', { headers: { 'X-SVC-SIGNED': 'bm90IGEgc2lnbmF0dXJl' } }));
  });

  it('refuses a timestamp 120 s old, accepts one 50 s old', async () => {
    forbidden(await platform.get('/assets', { timestamp: ctx.clock.nowSeconds() - 120 }));
    forbidden(await platform.get('/assets', { timestamp: ctx.clock.nowSeconds() + 120 }));
    expect((await platform.get('/assets', { timestamp: ctx.clock.nowSeconds() - 50 })).status).toBe(200);
  });

  it('refuses a wrong passphrase', async () => {
    forbidden(await platform.get('/assets', { headers: { 'X-SVC-PASSPHRASE': 'not-the-passphrase' } }));
  });

  it('refuses an unknown key', async () => {
    forbidden(await platform.get('/assets', { headers: { 'X-SVC-API-KEY': 'no-such-key' } }));
  });

  it('refuses a key too long to be one of ours with 403, not a 500', async () => {
    forbidden(await platform.get('/assets', { headers: { 'X-SVC-API-KEY': 'k'.repeat(3000) } }));
  });

  // A read may be verified against the key item as read up to KEY_ITEM_KEPT_FOR_READS_MS ago; a write, and a
  // GET that creates something, reads it afresh (docs/api.md, "Revoking a key"). The clock is held so the
  // machine's speed decides nothing.
  it('refuses a revoked key on a read once the key item this process keeps is 5 s old', async () => {
    const other = await newPlatform();
    ctx.clock.hold();
    try {
      expect((await other.get('/assets')).status).toBe(200);
      await revokeApiKey(ctx, other.credentials.api_key);
      // Verified against the item read before the revocation, passphrase and signature checked all the same.
      expect((await other.get('/assets')).status).toBe(200);
      forbidden(await other.get('/assets', { headers: { 'X-SVC-PASSPHRASE': 'not-the-passphrase' } }));
      ctx.clock.advance(KEY_ITEM_KEPT_FOR_READS_MS - 1);
      expect((await other.get('/assets')).status).toBe(200);
      ctx.clock.advance(1);
      forbidden(await other.get('/assets'));
    } finally {
      ctx.clock.reset();
    }
  });

  it('refuses a revoked key on a write at once, and then its reads in this process too', async () => {
    const other = await newPlatform();
    ctx.clock.hold();
    try {
      expect((await other.get('/assets')).status).toBe(200);
      await revokeApiKey(ctx, other.credentials.api_key);
      forbidden(
        await other.post('/transfers', {
          from_participant_code: other.participantCode,
          to_participant_code: other.participantCode,
          asset: 'USD',
          amount: '1',
        }),
      );
      // The write read the key afresh: what this process keeps for reads is that item now.
      forbidden(await other.get('/assets'));
    } finally {
      ctx.clock.reset();
    }
  });

  it('refuses a revoked key at once on a GET that creates a quote', async () => {
    const other = await newPlatform();
    ctx.clock.hold();
    try {
      expect((await other.get('/assets')).status).toBe(200);
      await revokeApiKey(ctx, other.credentials.api_key);
      forbidden(await other.get('/liquidity/rfq?side=buy&underlying=BTC&quoted_currency=USD&quantity=0.01'));
    } finally {
      ctx.clock.reset();
    }
  });

  it('refuses a key without the route permission', async () => {
    const limited = await newPlatform({ permissions: ['transfers'] });
    const response = await limited.get('/assets');
    expect(response.status).toBe(403);
    expect(response.body).toEqual({ error: true, message: expect.stringContaining("'assets'") });
  });

  it('logs what failed, while the client hears one message', async () => {
    // The server of this file is bound to `ctx`: its logger is the one the middleware writes to.
    const warn = vi.spyOn(ctx.logger, 'warn').mockImplementation(() => undefined);
    try {
      forbidden(await platform.get('/assets', { headers: { 'X-SVC-PASSPHRASE': 'not-the-passphrase' } }));
      forbidden(await platform.get('/assets', { headers: { 'X-SVC-API-KEY': 'no-such-key' } }));
      const lines = warn.mock.calls.map(([message, attributes]) => ({ message, ...(attributes as object) }));
      expect(lines).toEqual([
        expect.objectContaining({
          message: 'request',
          route: 'GET /assets',
          status: 403,
          auth_failure: 'invalid passphrase',
        }),
        expect.objectContaining({
          message: 'request',
          route: 'GET /assets',
          status: 403,
          auth_failure: 'unknown API key',
        }),
      ]);
      expect(JSON.stringify(lines)).not.toContain(platform.credentials.passphrase);
    } finally {
      warn.mockRestore();
    }
  });

  it('refuses anything but exactly one base64 signature in X-SVC-SIGNED', async () => {
    const timestamp = String(ctx.clock.nowSeconds());
    const good = sign(Buffer.from(platform.credentials.api_secret, 'base64'), timestamp, 'GET', '/assets', '{}');
    const withSignature = (signature: string) =>
      send('GET', '/assets', undefined, {
        unsigned: true,
        headers: {
          'X-SVC-API-KEY': platform.credentials.api_key,
          'X-SVC-PASSPHRASE': platform.credentials.passphrase,
          'X-SVC-TIMESTAMP': timestamp,
          'X-SVC-SIGNED': signature,
        },
      });
    for (const junk of [
      `${good}junk`,
      `${good} ${good}`,
      `${good},${good}`,
      `${good}==`,
      `${good}.`,
      good.slice(0, -2),
      good.replace(/\+/g, '-').replace(/\//g, '_'),
    ]) {
      if (junk === good) continue;
      forbidden(await withSignature(junk));
    }
    expect((await withSignature(good)).status).toBe(200);
    // Padding is optional: the same 32 bytes either way.
    expect((await withSignature(good.replace(/=$/, ''))).status).toBe(200);
  });

  it("refuses a POST whose query is not under its signature; a GET may sign its bare path (the spec's weaker form)", async () => {
    const body = {
      from_participant_code: platform.participantCode,
      to_participant_code: platform.participantCode,
      asset: 'USD',
      amount: '1',
    };
    forbidden(await platform.post('/transfers?to_account_label=elsewhere', body, { signWithoutQuery: true }));
    // Signed with its query, the same request passes authentication (and fails on its body instead).
    const signed = await platform.post('/transfers?to_account_label=elsewhere', body);
    expect(signed.status, signed.text).toBe(400);
    expect((await platform.get('/assets?symbol=BTC', { signWithoutQuery: true })).status).toBe(200);
    // A GET signed over a different query than it sends is refused.
    const secret = Buffer.from(platform.credentials.api_secret, 'base64');
    const timestamp = String(ctx.clock.nowSeconds());
    forbidden(
      await send('GET', '/assets?symbol=ETH', undefined, {
        unsigned: true,
        headers: {
          'X-SVC-API-KEY': platform.credentials.api_key,
          'X-SVC-PASSPHRASE': platform.credentials.passphrase,
          'X-SVC-TIMESTAMP': timestamp,
          'X-SVC-SIGNED': sign(secret, timestamp, 'GET', '/assets?symbol=BTC', '{}'),
        },
      }),
    );
  });

  it('accepts the fixed test vector computed outside the code base', async () => {
    const { platform_code } = await createPlatform(ctx, 'vector platform');
    const apiKey = `vector-${platform_code}`;
    await createApiKey(ctx, platform_code, ['assets'], {
      api_key: apiKey,
      api_secret: 'Zml4ZWQtdGVzdC12ZWN0b3Itc2VjcmV0LTMyYnl0ZXM=',
      passphrase: 'vector-passphrase',
    });
    const headers = (signature: string) => ({
      'X-SVC-API-KEY': apiKey,
      'X-SVC-PASSPHRASE': 'vector-passphrase',
      'X-SVC-TIMESTAMP': '1700000000',
      'X-SVC-SIGNED': signature,
    });
    ctx.clock.advance(1_700_000_000_000 - ctx.clock.nowMs());
    try {
      const withBraces = await send('GET', '/assets', undefined, {
        unsigned: true,
        headers: headers('nvbMIwhJaFxg5gFBBm9v/Ectppt0G97l/icNMSUgP6k='),
      });
      expect(withBraces.status).toBe(200);
      const emptyBody = await send('GET', '/assets', undefined, {
        unsigned: true,
        headers: headers('7mBNnT1KIXtQ5nstQU5GUaFIq70PEKBQqu76i9QZXkk='),
      });
      expect(emptyBody.status).toBe(200);
      const withQuery = await send('GET', '/assets?symbol=BTC', undefined, {
        unsigned: true,
        headers: headers('EIlQujtpF0HaBWKfQGth5a1ynm98VPDv0lD8rPBo7V0='),
      });
      expect(withQuery.status).toBe(200);
      const wrongVector = await send('GET', '/assets?symbol=ETH', undefined, {
        unsigned: true,
        headers: headers('EIlQujtpF0HaBWKfQGth5a1ynm98VPDv0lD8rPBo7V0='),
      });
      expect(wrongVector.status).toBe(403);
    } finally {
      ctx.clock.reset();
    }
  });
});

describe('permission areas', () => {
  const signed = routes.filter((route) => route.area !== null);

  it('cover every signed route', () => {
    for (const route of signed) expect(PERMISSION_AREAS).toContain(route.area);
    expect(PERMISSION_AREAS).toEqual(expect.arrayContaining(['withdrawals', 'webhooks']));
  });

  it.each(signed.map((route) => [`${route.method} ${route.path}`, route] as const))(
    '%s needs its area and no other',
    async (_name, route) => {
      const path = route.path.replace(/\{[^}]+\}/g, 'unknown-id');
      const body = route.method === 'POST' ? {} : undefined;
      const without = await newPlatform({ permissions: PERMISSION_AREAS.filter((area) => area !== route.area) });
      const refused = await without.request(route.method, path, body);
      expect(refused.status, refused.text).toBe(403);
      expect(refused.body.message).toContain(`'${route.area}'`);
      const only = await newPlatform({ permissions: [route.area!] });
      const allowed = await only.request(route.method, path, body);
      expect(allowed.status, allowed.text).not.toBe(403);
      expect(allowed.status, allowed.text).toBeLessThan(500);
    },
  );

  it('a key is never created without an area', async () => {
    const { platform_code } = await createPlatform(ctx, 'no areas');
    await expect(createApiKey(ctx, platform_code, [])).rejects.toThrow(/at least one permission area/);
    await expect(
      runAdmin(['key', 'create', '--platform', platform_code, '--permissions', '', '--reason', 'test'], { ctx }),
    ).rejects.toThrow(/--permissions/);
    await expect(
      runAdmin(['key', 'create', '--platform', platform_code, '--permissions', 'trades,', '--reason', 'test'], { ctx }),
    ).rejects.toThrow(/--permissions/);
    const created: any = await runAdmin(
      ['key', 'create', '--platform', platform_code, '--permissions', 'trades', '--reason', 'test'],
      { ctx },
    );
    expect(created.platform_code).toBe(platform_code);
  });
});

describe('ops: platform create', () => {
  it('prints credentials that sign requests for the new platform', async () => {
    const created: any = await runAdmin(
      ['platform', 'create', '--name', 'Ops Platform', '--spread-bps', '25', '--reason', 'test'],
      { ctx },
    );
    expect(Object.keys(created).sort()).toEqual([
      'api_key',
      'api_secret',
      'participant_code',
      'passphrase',
      'platform_code',
    ]);
    expect(Buffer.from(created.api_secret, 'base64')).toHaveLength(32);
    expect((await getPlatform(ctx, created.platform_code))?.spread_bps).toBe('25');
    const response = await send('GET', '/participants', undefined, { credentials: created });
    expect(response.status, response.text).toBe(200);
    expect(response.body.message).toEqual([
      expect.objectContaining({ participant_code: created.participant_code, platform_code: created.platform_code }),
    ]);
  });

  it('refuses a spread quotes could not use, before creating anything', async () => {
    for (const spread of ['abc', '-5', '10000']) {
      await expect(
        runAdmin(['platform', 'create', '--name', 'Bad Spread', '--spread-bps', spread, '--reason', 'test'], { ctx }),
        spread,
      ).rejects.toThrow(/spread/);
    }
  });
});
