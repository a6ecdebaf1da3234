import { readStackInfo } from './local-env.js';
import { sign } from '../../lib/http/signature.js';

/**
 * `npm run call -- METHOD PATH [BODY]`: sends one signed request, the way a platform would. Credentials come
 * from SVC_API_KEY, SVC_API_SECRET (base64) and SVC_PASSPHRASE; the base URL from SVC_BASE_URL or the
 * running `npm start`. Prints the status and the X-Request-Id (stderr), then the body (stdout).
 */
const [method = 'GET', path = '/time', body] = process.argv.slice(2);
const baseUrl = process.env.SVC_BASE_URL ?? readStackInfo()?.base_url ?? 'http://127.0.0.1:3000';
const { SVC_API_KEY, SVC_API_SECRET, SVC_PASSPHRASE } = process.env;

const headers: Record<string, string> = { 'Content-Type': 'application/json' };
if (SVC_API_KEY && SVC_API_SECRET && SVC_PASSPHRASE) {
  const timestamp = String(Math.floor(Date.now() / 1000));
  headers['X-SVC-API-KEY'] = SVC_API_KEY;
  headers['X-SVC-PASSPHRASE'] = SVC_PASSPHRASE;
  headers['X-SVC-TIMESTAMP'] = timestamp;
  headers['X-SVC-SIGNED'] = sign(
    Buffer.from(SVC_API_SECRET, 'base64'),
    timestamp,
    method.toUpperCase(),
    path,
    body ?? '{}',
  );
} else if (path !== '/time') {
  console.error('note: SVC_API_KEY, SVC_API_SECRET and SVC_PASSPHRASE are not all set; sending unsigned');
}
if (process.env.SVC_REQUEST_ID) headers['X-Request-Id'] = process.env.SVC_REQUEST_ID;

const response = await fetch(`${baseUrl}${path}`, { method: method.toUpperCase(), headers, body: body ?? undefined });
const text = await response.text();
// The status line goes to stderr, so stdout is the body alone and pipes into jq.
console.error(`HTTP ${response.status}  X-Request-Id: ${response.headers.get('x-request-id')}`);
try {
  console.log(JSON.stringify(JSON.parse(text), null, 2));
} catch {
  console.log(text);
}
process.exitCode = response.ok ? 0 : 1;
