import { describe, expect, it } from 'vitest';
import {
  isOneSignature,
  queryStringVariants,
  sign,
  signaturesEqual,
  signedTextCandidates,
} from '../../lib/http/signature.js';

// Vectors computed outside this code base with:
//   printf '%s' "<text>" | openssl dgst -sha256 -mac HMAC -macopt hexkey:<hex of secret> -binary | base64
const SECRET = Buffer.from('Zml4ZWQtdGVzdC12ZWN0b3Itc2VjcmV0LTMyYnl0ZXM=', 'base64');

describe('request signature', () => {
  it.each([
    ['1700000000', 'GET', '/assets', '{}', 'nvbMIwhJaFxg5gFBBm9v/Ectppt0G97l/icNMSUgP6k='],
    ['1700000000', 'GET', '/assets', '', '7mBNnT1KIXtQ5nstQU5GUaFIq70PEKBQqu76i9QZXkk='],
    ['1700000000', 'GET', '/assets?symbol=BTC', '{}', 'EIlQujtpF0HaBWKfQGth5a1ynm98VPDv0lD8rPBo7V0='],
    ['1700000000', 'POST', '/transfers', '{"amount":"1"}', 'EyRMiXUJiTcng132au1mgCmzoD91RNe86oh4plR3xnA='],
  ])(
    'HMAC-SHA256 of timestamp+method+path+body with the base64-decoded secret (%s %s %s %s)',
    (ts, method, path, body, expected) => {
      expect(sign(SECRET, ts, method, path, body)).toBe(expected);
    },
  );

  it('compares in constant time and never matches different lengths', () => {
    expect(
      signaturesEqual('nvbMIwhJaFxg5gFBBm9v/Ectppt0G97l/icNMSUgP6k=', 'nvbMIwhJaFxg5gFBBm9v/Ectppt0G97l/icNMSUgP6k='),
    ).toBe(true);
    expect(
      signaturesEqual('nvbMIwhJaFxg5gFBBm9v/Ectppt0G97l/icNMSUgP6k=', 'nvbMIwhJaFxg5gFBBm9v/Ectppt0G97l/icNMSUgP6o='),
    ).toBe(false);
    expect(signaturesEqual('nvbMIwhJaFxg5gFBBm9v/Ectppt0G97l/icNMSUgP6k=', 'AAAA')).toBe(false);
  });

  it('accepts the path with or without the query, and {} or the empty body when there is none', () => {
    const candidates = signedTextCandidates('GET', '1', {
      paths: ['/assets'],
      queries: queryStringVariants({ symbol: ['BTC'] }),
      bodies: ['{}', ''],
    }).map((parts) => parts.join(''));
    expect(candidates).toEqual(
      expect.arrayContaining(['1GET/assets{}', '1GET/assets', '1GET/assets?symbol=BTC{}', '1GET/assets?symbol=BTC']),
    );
  });

  it('keeps the query of any other method under the signature', () => {
    const candidates = signedTextCandidates('POST', '1', {
      paths: ['/transfers'],
      queries: queryStringVariants({ a: ['1'] }),
      bodies: ['{"x":1}'],
    }).map((parts) => parts.join(''));
    expect(candidates).toEqual(['1POST/transfers?a=1{"x":1}']);
    expect(
      signedTextCandidates('POST', '1', { paths: ['/transfers'], queries: [], bodies: ['{}'] }).map((parts) =>
        parts.join(''),
      ),
    ).toEqual(['1POST/transfers{}']);
  });

  it('takes exactly one base64 HMAC-SHA256 value', () => {
    const good = 'nvbMIwhJaFxg5gFBBm9v/Ectppt0G97l/icNMSUgP6k=';
    expect(isOneSignature(good)).toBe(true);
    expect(isOneSignature(good.slice(0, -1))).toBe(true);
    for (const bad of [
      `${good}x`,
      `${good} ${good}`,
      `${good}=`,
      good.slice(0, -2),
      'nvbMIwhJaFxg5gFBBm9v_Ectppt0G97l-icNMSUgP6k=',
      'nvbMIwhJaFxg5gFBBm9v/Ectppt0G97l/icNMSUgP6l=',
      '',
    ]) {
      expect(isOneSignature(bad), bad).toBe(false);
    }
  });

  it('rebuilds the query string in the encodings clients use, and raw, in the order sent', () => {
    expect(queryStringVariants({ b: ['x y'], a: ['1', '2'] })).toEqual([
      'b=x%20y&a=1&a=2',
      'b=x+y&a=1&a=2',
      'b=x y&a=1&a=2',
    ]);
    // JavaScript's encodeURIComponent, RFC 3986 strict, WHATWG/Java form encoding, Python/Go form encoding.
    expect(queryStringVariants({ q: ["*'~ "] })).toEqual([
      "q=*'~%20",
      'q=%2A%27~%20',
      'q=*%27%7E+',
      'q=%2A%27~+',
      "q=*'~ ",
    ]);
    // Raw only where it would decode to the same parameters.
    expect(queryStringVariants({ q: ['a&b=c'] })).not.toContain('q=a&b=c');
    expect(queryStringVariants(null)).toEqual([]);
  });

  it('accepts the target exactly as received besides the rebuilt ones', () => {
    const candidates = signedTextCandidates('GET', '1', {
      paths: ['/accounts'],
      queries: queryStringVariants({ account_owner: ['A'] }),
      exactTargets: ['/accounts?account_owner=%41'],
      bodies: ['{}'],
    }).map((parts) => parts.join(''));
    expect(candidates).toEqual(
      expect.arrayContaining([
        '1GET/accounts?account_owner=%41{}',
        '1GET/accounts?account_owner=A{}',
        '1GET/accounts{}',
      ]),
    );
  });
});
