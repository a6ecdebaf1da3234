import { sign } from '../http/signature.js';
import { SIGNATURE_WINDOW_SECONDS } from '../http/middleware/verify-signature.js';

/**
 * A worked signing example a reader can reproduce. The signatures are computed here with the service's own
 * `sign`, so the text cannot drift from what the service checks (a test recomputes them independently).
 */
export const SIGNING_EXAMPLE = {
  /** Base64 of the 32 ASCII bytes `an example secret; never use it!`. */
  secret: Buffer.from('an example secret; never use it!', 'ascii').toString('base64'),
  timestamp: '1767225600',
  post: {
    method: 'POST',
    target: '/transfers',
    body: '{"from_participant_code":"ACME01","to_participant_code":"ACME01","to_account_label":"savings","asset":"USD","amount":"250.00"}',
  },
  get: { method: 'GET', target: '/transfers?page=2&page_size=10', body: '{}' },
} as const;

function exampleSignature(request: { method: string; target: string; body: string }): string {
  return sign(
    Buffer.from(SIGNING_EXAMPLE.secret, 'base64'),
    SIGNING_EXAMPLE.timestamp,
    request.method,
    request.target,
    request.body,
  );
}

/** The "Signing requests" section of the API description (markdown). */
export function signingGuide(): string {
  const { secret, timestamp, post, get } = SIGNING_EXAMPLE;
  return `## Signing requests

Every operation except \`GET /time\`, \`GET /openapi.json\` and \`GET /docs\` needs four headers:

| header | value |
|---|---|
| \`X-SVC-API-KEY\` | the API key |
| \`X-SVC-PASSPHRASE\` | the key's passphrase |
| \`X-SVC-TIMESTAMP\` | UNIX time in seconds, within ${SIGNATURE_WINDOW_SECONDS} s of server time (\`GET /time\` tells it) |
| \`X-SVC-SIGNED\` | base64 of HMAC-SHA256, keyed with the **base64-decoded** API secret, over \`timestamp + METHOD + target + body\` |

- \`target\` is the path plus the query string exactly as sent (\`/transfers?page=2\`). A GET may also sign the
  path without its query: accepted, but weaker (the query could then be altered by whoever holds the headers).
- \`body\` is the raw body text exactly as sent; a request without a body signs \`{}\` (the empty string is accepted too).
- A mutating request whose signature was already accepted is a repeat: with the first request's \`X-Request-Id\`
  it gets the first response, otherwise 409. Sign again with a new timestamp to send a new request.

### Worked example

Secret \`${secret}\` (base64 of the ASCII text \`an example secret; never use it!\`), timestamp \`${timestamp}\`.

\`POST ${post.target}\` with the body

\`\`\`
${post.body}
\`\`\`

signs the text \`${timestamp}${post.method}${post.target}${post.body}\` and sends

\`\`\`
X-SVC-TIMESTAMP: ${timestamp}
X-SVC-SIGNED: ${exampleSignature(post)}
\`\`\`

\`GET ${get.target}\` (no body) signs \`${timestamp}${get.method}${get.target}${get.body}\`:
\`X-SVC-SIGNED: ${exampleSignature(get)}\`.

In JavaScript:

\`\`\`js
import { createHmac } from 'node:crypto';
const signed = createHmac('sha256', Buffer.from(secret, 'base64'))
  .update(timestamp + method + target + body)
  .digest('base64');
\`\`\`
`;
}
