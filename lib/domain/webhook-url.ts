import ipaddr from 'ipaddr.js';

/**
 * What a webhook endpoint URL may be (outbound safety: the service must not be a way into private networks). The address rule is applied twice:
 * here to an IP literal or `localhost` when the endpoint is created or changed, and again by the sender to
 * every address the name resolves to at delivery time (a name can be re-pointed after it was accepted).
 */
const MAX_WEBHOOK_URL_LENGTH = 2048;

export interface OutboundPolicy {
  /** Loopback, private, link-local and the other non-public ranges are reachable (`npm start`, tests). */
  allowPrivateAddresses: boolean;
  /** Plain `http:` is accepted; deployed stacks accept `https:` only. */
  allowHttp: boolean;
}

/**
 * True when an address is not a public unicast address: loopback, private (10/8, 172.16/12, 192.168/16),
 * link-local (169.254/16: the instance metadata address), carrier-grade NAT (100.64/10), unique-local
 * (fc00::/7), IPv4-mapped IPv6 (::ffff:0:0/96), multicast, reserved, documentation and translation ranges.
 * ipaddr.js names every range; only `unicast` is public. Unparseable text is refused too.
 */
export function isRefusedAddress(address: string): boolean {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (!ipaddr.isValid(bare)) return true;
  return ipaddr.parse(bare).range() !== 'unicast';
}

/** The host of a parsed URL as an IP literal (brackets removed), or undefined for a name. */
export function ipLiteralOf(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return ipaddr.isValid(host) ? host : undefined;
}

function isLocalName(hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * The problems of a webhook URL, each naming `url`; empty when it is acceptable as far as can be told
 * without resolving its name. A refused address is reported without echoing it (it may be internal).
 */
export function webhookUrlProblems(value: unknown, policy: OutboundPolicy): string[] {
  if (value === undefined || value === null || value === '') return ['url: required'];
  if (typeof value !== 'string') return ['url: must be a string'];
  if (value.length > MAX_WEBHOOK_URL_LENGTH) return [`url: longer than ${MAX_WEBHOOK_URL_LENGTH} characters`];
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return ['url: must be an absolute http(s) URL'];
  }
  const problems: string[] = [];
  const schemes = policy.allowHttp ? ['http:', 'https:'] : ['https:'];
  if (!schemes.includes(url.protocol))
    problems.push(policy.allowHttp ? 'url: must use http or https' : 'url: must use https');
  if (url.username || url.password) problems.push('url: must not contain credentials');
  if (!url.hostname) problems.push('url: must name a host');
  else if (!policy.allowPrivateAddresses) {
    const literal = ipLiteralOf(url);
    if ((literal !== undefined && isRefusedAddress(literal)) || isLocalName(url.hostname)) {
      problems.push('url: points to a private, loopback or otherwise non-public address');
    }
  }
  return problems;
}
