import * as z from 'zod/mini';
import type { HandlerDescription } from '../http/api-handler.js';
import { errorList, forbiddenError, gatewayError, internalError, notFoundError } from '../http/schemas/common.js';
import { signingGuide } from './signing-guide.js';

/** What the generator needs of a route table row (the table itself lives at the edge). */
export interface RouteRow {
  method: string;
  /** API Gateway resource path, with `{param}` placeholders. */
  path: string;
  /** Permission area; null for the unsigned routes. */
  area: string | null;
  /** A GET that creates something (a quote): claimed against replays and idempotent like a POST. */
  writes?: true;
}

export interface DescribedRoute {
  route: RouteRow;
  /** What the route's handler recorded about itself (`routeHandler`), its schemas imported; absent for a handler built otherwise. */
  api?: LoadedDescription;
}

/** A handler's description with the schemas it names for the description alone imported (`describeRoutes`). */
export type LoadedDescription = Omit<HandlerDescription, 'response' | 'documentedBody'> & {
  response?: z.ZodMiniType;
  documentedBody?: z.ZodMiniType;
};

type Json = Record<string, unknown>;

interface DocumentOptions {
  version: string;
  /** Extra top-level `webhooks` (OpenAPI 3.1): the events the service delivers. */
  webhooks?: Json;
  /** Schemas the webhooks refer to, each registered with an `id`: they land in `components.schemas` under it. */
  webhookSchemas?: readonly z.ZodMiniType[];
}

/** One tag per permission area (what an API key must hold), plus the unsigned routes. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  accounts: 'Balances. Permission area `accounts`.',
  assets: 'The asset registry. Permission area `assets`.',
  awards: 'Award pools: fund, then distribute to customers. Permission area `awards`.',
  convert_withdraw: 'Buy and withdraw on-chain in one step. Permission area `convert_withdraw`.',
  documentation: 'This description and its reference page; unsigned.',
  liquidity: 'Quotes and their execution. Permission area `liquidity`.',
  participants: 'Customers (adults and minors) and the platform itself. Permission area `participants`.',
  payments: 'ACH payments created by funded executions. Permission area `payments`.',
  rewards: 'Assets bought for a customer, paid by the platform. Permission area `rewards`.',
  system: 'Server time, for clients checking their clock before signing; unsigned.',
  trades: 'Reported trades and their settlement. Permission area `trades`.',
  transfers: 'Moves between accounts the platform may act for. Permission area `transfers`.',
  withdrawals: 'On-chain withdrawal requests made by convert-withdraw executions. Permission area `withdrawals`.',
  webhooks: "Event deliveries to the platform's endpoints (see `webhooks`). Permission area `webhooks`.",
};

/** The tag of a route: its permission area; the unsigned routes are `system` (GET /time) or `documentation`. */
function tagOf(route: RouteRow): string {
  return route.area ?? (route.path === '/time' ? 'system' : 'documentation');
}

const SECURITY_SCHEMES = {
  ApiKey: { type: 'apiKey', in: 'header', name: 'X-SVC-API-KEY', description: 'The API key.' },
  Passphrase: { type: 'apiKey', in: 'header', name: 'X-SVC-PASSPHRASE', description: "The key's passphrase." },
  Timestamp: {
    type: 'apiKey',
    in: 'header',
    name: 'X-SVC-TIMESTAMP',
    description: 'UNIX seconds, within 60 s of server time.',
  },
  Signature: {
    type: 'apiKey',
    in: 'header',
    name: 'X-SVC-SIGNED',
    description:
      'Base64 HMAC-SHA256 of `timestamp + METHOD + target + body` keyed with the base64-decoded secret (see "Signing requests").',
  },
} as const;

/** All four headers together: one requirement object is an AND of its schemes. */
const SIGNED = [{ ApiKey: [], Passphrase: [], Timestamp: [], Signature: [] }];

const ERROR_RESPONSES: Record<
  string,
  { description: string; schema: string | string[]; example: unknown; headers?: Json }
> = {
  '400': {
    description: 'Invalid input: every problem at once; nothing was written.',
    schema: 'ErrorList',
    example: { errors: ['amount: must be a decimal string', "asset: unknown asset 'XYZ'"] },
  },
  '403': {
    description: 'Authentication or permission failure.',
    schema: 'ForbiddenError',
    example: { error: true, message: "API key lacks the 'transfers' permission" },
  },
  '404': {
    description: "Unknown resource, or another platform's.",
    schema: 'NotFoundError',
    example: { error: 'transfer not found: 123' },
  },
  '409': {
    description:
      'A client id reused inside its 72-hour window, a repeat of an accepted signature, or the same X-Request-Id still in progress.',
    schema: 'ErrorList',
    example: { errors: ['X-Request-Id: a request with this id is still in progress'] },
  },
  '413': {
    description:
      'Body larger than 1 MiB; refused before parsing. (Over 10 MB API Gateway itself refuses it, with `{"message": "Request Too Long"}`.)',
    schema: ['ErrorList', 'GatewayError'],
    example: { errors: ['body: larger than 1048576 bytes'] },
  },
  '422': {
    description: 'X-Request-Id reused with a different request.',
    schema: 'ErrorList',
    example: { errors: ['X-Request-Id: already used with a different request'] },
  },
  '429': {
    description:
      "The API key is over its request rate limit (its platform's, or the default); nothing was done. Retry after `Retry-After` seconds. " +
      '`RateLimit-Policy` and `RateLimit` follow draft-ietf-httpapi-ratelimit-headers-09: `"burst";q=40;w=1, "sustained";q=200;w=10` and `"burst";r=0;t=1`. ' +
      '(API Gateway\'s own stage throttle answers 429 too, with `{"message": "Too Many Requests"}` and none of these headers.)',
    schema: ['ErrorList', 'GatewayError'],
    example: { errors: ['rate limit exceeded: retry after 1 s'] },
    headers: {
      'Retry-After': { $ref: '#/components/headers/RetryAfterOptional' },
      'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' },
      RateLimit: { $ref: '#/components/headers/RateLimit' },
    },
  },
  '500': {
    description: 'Unexpected failure; no internals shown.',
    schema: 'InternalError',
    example: { error: 'Internal Server Error' },
  },
  '503': {
    description:
      'A dependency is throttled or down (or a reference price is stale); retry after `Retry-After` seconds.',
    schema: 'ErrorList',
    example: { errors: ['service busy, retry shortly'] },
    headers: { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } },
  },
};

const ERROR_SCHEMAS = [errorList, forbiddenError, notFoundError, internalError, gatewayError];

/**
 * Converts zod schemas to JSON Schema 2020-12 (OpenAPI 3.1's dialect), hoisting schemas registered with an
 * `id` into `components.schemas` so each appears once.
 */
class SchemaCollector {
  readonly components: Record<string, Json> = {};

  convert(schema: z.ZodMiniType, io: 'input' | 'output'): Json {
    const converted = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
    const { $schema: _dialect, $defs, ...rest } = converted;
    for (const [name, definition] of Object.entries(($defs ?? {}) as Record<string, Json>))
      this.add(name, this.rewrite(definition));
    return this.rewrite(rest);
  }

  add(name: string, definition: Json): void {
    const existing = this.components[name];
    if (existing && JSON.stringify(existing) !== JSON.stringify(definition)) {
      throw new Error(`two different schemas are registered as '${name}'`);
    }
    this.components[name] = definition;
  }

  /** `#/$defs/X` -> `#/components/schemas/X`, everywhere in the tree. */
  private rewrite(value: Json): Json {
    return JSON.parse(JSON.stringify(value).replaceAll('"#/$defs/', '"#/components/schemas/')) as Json;
  }
}

function operationId(route: RouteRow): string {
  const words = [route.method.toLowerCase(), ...route.path.split(/[/_{}.-]+/).filter(Boolean)];
  return words.map((word, i) => (i === 0 ? word : word[0]!.toUpperCase() + word.slice(1))).join('');
}

/** Query or path parameters from an object schema's JSON Schema. */
function parameters(objectSchema: Json | undefined, location: 'query' | 'path'): Json[] {
  if (!objectSchema) return [];
  const properties = (objectSchema.properties ?? {}) as Record<string, Json>;
  const required = new Set((objectSchema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, schema]) => {
    const { description, ...rest } = schema;
    return {
      name,
      in: location,
      required: location === 'path' || required.has(name),
      ...(typeof description === 'string' && { description }),
      schema: rest,
    };
  });
}

/**
 * The error answers an operation can give. A malformed JSON body (400) or an oversized one (413) can reach
 * any route; the rest follow from the route: signed routes authenticate (403), are rate limited per key (429) and depend on the store (503),
 * addressed resources and referenced ones (a POST naming a quote) can be missing (404), and POSTs carry the
 * client-id windows, replays and X-Request-Id idempotency (409, 422), as do the GETs that create a quote.
 */
function errorStatuses(route: RouteRow): string[] {
  const signed = route.area !== null;
  const post = route.method === 'POST';
  const claimed = post || route.writes === true;
  const statuses = [
    '400',
    signed && '403',
    signed && (post || route.path.includes('{')) && '404',
    signed && claimed && '409',
    '413',
    signed && claimed && '422',
    signed && '429',
    '500',
    signed && '503',
  ];
  return statuses.filter((status): status is string => status !== false);
}

function operation(described: DescribedRoute, schemas: SchemaCollector): Json {
  const { route, api } = described;
  const signed = route.area !== null;
  const path = api?.path ? schemas.convert(api.path, 'input') : undefined;
  const query = api?.query ? schemas.convert(api.query, 'input') : undefined;
  const success = String(api?.successStatus ?? 200);
  const responseSchema = api?.response ? schemas.convert(api.response, 'output') : undefined;
  const produces = api?.produces ?? 'application/json';
  const notes = [
    api?.description,
    signed ? `Permission area: \`${route.area}\`.` : 'Unsigned: needs no authentication headers.',
    route.method === 'POST' && signed
      ? 'Idempotent for 72 hours with `X-Request-Id`: the same id and body return the first response.'
      : undefined,
    route.writes && signed
      ? 'Creates a quote, so it is claimed like a POST: its signature is accepted once (the same headers sent again, whatever their query, are a 409 and make nothing), and with `X-Request-Id` it is idempotent for 72 hours (the same id and query return the first quote; another query under that id is a 422).'
      : undefined,
  ].filter(Boolean);

  const responses: Json = {
    [success]: {
      description: api?.summary ?? 'Success',
      headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } },
      content: {
        [produces]: {
          schema: responseSchema ?? (produces === 'application/json' ? { type: 'object' } : { type: 'string' }),
        },
      },
    },
  };
  for (const status of errorStatuses(route)) responses[status] = { $ref: `#/components/responses/${status}` };

  return {
    operationId: operationId(route),
    summary: api?.summary ?? `${route.method} ${route.path}`,
    description: notes.join('\n\n'),
    tags: [tagOf(route)],
    security: signed ? SIGNED : [],
    parameters: [
      ...parameters(path, 'path'),
      ...parameters(query, 'query'),
      ...((route.method === 'POST' || route.writes) && signed ? [{ $ref: '#/components/parameters/RequestId' }] : []),
    ],
    ...(api?.body && {
      requestBody: {
        required: true,
        content: { 'application/json': { schema: schemas.convert(api.documentedBody ?? api.body, 'input') } },
      },
    }),
    responses,
  };
}

/**
 * The OpenAPI 3.1 document of the service, from the route table and what each handler recorded about its
 * schemas. Deterministic: the same routes give the same bytes (routes sorted by path, then method).
 */
export function openApiDocument(routes: readonly DescribedRoute[], options: DocumentOptions): Json {
  const schemas = new SchemaCollector();
  // Registered with ids, so converting them puts each under components.schemas.
  for (const schema of ERROR_SCHEMAS) schemas.convert(schema, 'output');
  const sorted = [...routes].sort(
    (a, b) => a.route.path.localeCompare(b.route.path) || a.route.method.localeCompare(b.route.method),
  );
  const paths = pathsOf(sorted, schemas);
  for (const schema of options.webhookSchemas ?? []) schemas.convert(schema, 'output');

  return {
    openapi: '3.1.0',
    info: infoOf(options.version),
    servers: [{ url: '.', description: 'This deployment (relative to where this document is served)' }],
    security: SIGNED,
    tags: tagsOf(sorted, Boolean(options.webhooks)),
    paths,
    ...(options.webhooks && { webhooks: options.webhooks }),
    components: {
      schemas: Object.fromEntries(Object.entries(schemas.components).sort(([a], [b]) => a.localeCompare(b))),
      responses: errorResponses(),
      parameters: { RequestId: requestIdParameter() },
      headers: responseHeaders(),
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}

/** Each path's operations, by lower-case method; converting their schemas registers the named ones. */
function pathsOf(sorted: readonly DescribedRoute[], schemas: SchemaCollector): Record<string, Record<string, Json>> {
  const paths: Record<string, Record<string, Json>> = {};
  for (const described of sorted) {
    (paths[described.route.path] ??= {})[described.route.method.toLowerCase()] = operation(described, schemas);
  }
  return paths;
}

/** The shared error responses operations refer to by status, each with its body's schema and an example. */
function errorResponses(): Json {
  const responses: Json = {};
  for (const [status, error] of Object.entries(ERROR_RESPONSES)) {
    responses[status] = {
      description: error.description,
      headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' }, ...error.headers },
      content: {
        'application/json': {
          schema: Array.isArray(error.schema)
            ? { oneOf: error.schema.map((name) => ({ $ref: `#/components/schemas/${name}` })) }
            : { $ref: `#/components/schemas/${error.schema}` },
          example: error.example,
        },
      },
    };
  }
  return responses;
}

/** The tags the routes use (and `webhooks` when the document has them), sorted by name. */
function tagsOf(sorted: readonly DescribedRoute[], hasWebhooks: boolean): Json[] {
  const tagNames = new Set(sorted.map(({ route }) => tagOf(route)));
  if (hasWebhooks) tagNames.add('webhooks');
  return [...tagNames]
    .sort()
    .map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? `Permission area \`${name}\`.` }));
}

/** The document's info: what the service is, the conventions every route follows, and how to sign a request. */
function infoOf(version: string): Json {
  return {
    title: 'Trading, rewards and settlement service',
    version,
    description: [
      'Trading, rewards and settlement for fintech platforms.',
      'Bodies are JSON. Success bodies carry the payload under `message`; lists add `page`, `page_size`, `total_pages` and `count`. ' +
        'Amounts are decimal strings (no sign, no exponent); an amount with more decimals than its asset allows is rejected, never rounded. ' +
        "Timestamps are UNIX milliseconds unless a field says otherwise. Every response carries `X-Request-Id`: the client's, or a new UUID.",
      signingGuide(),
    ].join('\n\n'),
    license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
  };
}

/** The X-Request-Id request header, which makes a POST idempotent. */
function requestIdParameter(): Json {
  return {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description: 'Makes a POST idempotent for 72 hours (1 to 128 of `A-Z a-z 0-9 . _ : -`). Echoed on every response.',
    schema: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,128}$' },
  };
}

/** The response headers responses refer to: the request id, and the rate limit's. */
function responseHeaders(): Json {
  return {
    RequestId: {
      description: "The client's X-Request-Id, or a new UUID.",
      required: true,
      schema: { type: 'string' },
    },
    RetryAfter: {
      description: 'Seconds to wait before retrying.',
      required: true,
      schema: { type: 'string', pattern: '^\\d+$' },
    },
    RetryAfterOptional: {
      description: "Seconds to wait before retrying (absent on API Gateway's stage throttle).",
      required: false,
      schema: { type: 'string', pattern: '^\\d+$' },
    },
    RateLimitPolicy: {
      description: "The key's quota policies (IETF draft-09 syntax).",
      required: false,
      schema: { type: 'string' },
    },
    RateLimit: {
      description: 'The policy that is exhausted, what remains of it (0) and seconds until it resets.',
      required: false,
      schema: { type: 'string' },
    },
  };
}
