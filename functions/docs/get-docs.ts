import { createHash } from 'node:crypto';
import { onLambda } from '../../lib/edge.js';
import { routeHandler } from '../../lib/http/api-handler.js';
import { getDocs } from '../../lib/routes.js';

// Redoc is loaded from this service (never a CDN: deployed stacks may be private). Both URLs are built from
// the page's own path, so the page works under an API Gateway stage prefix and with a trailing slash.
const LOADER = `
  const base = location.pathname.replace(/\\/docs\\/?$/, '');
  const script = document.createElement('script');
  script.src = base + '/docs/redoc.standalone.js';
  script.onload = () => Redoc.init(base + '/openapi.json', {}, document.getElementById('redoc'));
  document.head.appendChild(script);
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Trading, rewards and settlement service: API reference</title>
<style>body { margin: 0; }</style>
</head>
<body>
<div id="redoc"></div>
<script>${LOADER}</script>
</body>
</html>
`;

// Everything from this origin only: the one inline script by its hash, Redoc's generated styles, its search
// worker (a blob). Redoc's footer logo, which it would fetch from its CDN, is refused.
const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  `script-src 'self' 'sha256-${createHash('sha256').update(LOADER).digest('base64')}'`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** GET /docs: the API reference page, rendered by Redoc from GET /openapi.json. Unsigned; any query is ignored. */
export const bind = routeHandler(
  getDocs,
  {
    produces: 'text/html',
    summary: 'API reference page (HTML)',
    headers: { 'Content-Security-Policy': CONTENT_SECURITY_POLICY },
  },
  async ({ ctx }) => PAGE,
);

export const handler = onLambda(bind);
