import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { routes } from '../../infra/routes.js';
import { routeTableDocument } from '../../lib/openapi/route-table-document.js';

/**
 * Contract checks: every response the integration suite receives through `send` (test/support/service.ts)
 * is checked against the generated OpenAPI document (status documented for the operation, required headers
 * present, content type, body valid against the schema with no undocumented field). Ajv validates the
 * JSON Schema 2020-12 that OpenAPI 3.1 uses; the operation lookup is the router's own rule (a path with no
 * route is 404, a route without the method 405, both `{ "error": ... }`).
 */
type Json = Record<string, any>;

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

interface Contract {
  document: Json;
  ajv: Ajv2020;
  paths: { template: string; pattern: RegExp; literal: boolean }[];
  validators: Map<string, ValidateFunction>;
}

let contract: Promise<Contract> | undefined;

async function loadContract(): Promise<Contract> {
  const document = await routeTableDocument(routes);
  // OpenAPI-only keywords (`example`) sit beside JSON Schema ones; strict mode would refuse them.
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  ajv.addSchema(document, 'openapi');
  const paths = Object.keys(document.paths as Json).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{\w+\}/g, '[^/]+')}$`),
    literal: !template.includes('{'),
  }));
  // A literal path wins over a template that also matches it, as API Gateway routes.
  paths.sort((a, b) => Number(b.literal) - Number(a.literal));
  return { document, ajv, paths, validators: new Map() };
}

/** JSON Pointer escaping of one reference token. */
const token = (text: string) => text.replaceAll('~', '~0').replaceAll('/', '~1');

function resolveRef(document: Json, value: Json): { value: Json; pointer?: string } {
  if (typeof value.$ref !== 'string') return { value };
  const pointer = value.$ref as string;
  const resolved = pointer
    .slice(2)
    .split('/')
    .reduce((node: any, part) => node?.[part.replaceAll('~1', '/').replaceAll('~0', '~')], document);
  return { value: resolved as Json, pointer: pointer.slice(1) };
}

export interface ObservedResponse {
  method: string;
  /** The request target as sent (path and query). */
  target: string;
  /** The request body as sent, if any: a request the service accepted must match the documented body. */
  requestBody?: string;
  status: number;
  headers: Headers;
  text: string;
}

function validateBody(c: Contract, schemaPointer: string, body: unknown): string[] {
  let validate = c.validators.get(schemaPointer);
  if (!validate) {
    validate = c.ajv.compile({ $ref: `openapi#${schemaPointer}` });
    c.validators.set(schemaPointer, validate);
  }
  if (validate(body)) return [];
  return (validate.errors ?? []).map((error) => {
    const extra =
      error.keyword === 'additionalProperties'
        ? ` '${(error.params as { additionalProperty: string }).additionalProperty}'`
        : '';
    return `body${error.instancePath}: ${error.message}${extra}`;
  });
}

/** The problems of a response against the document; empty when it conforms. */
export async function contractViolations(observed: ObservedResponse): Promise<string[]> {
  contract ??= loadContract();
  const c = await contract;
  const path = new URL(observed.target, 'http://local').pathname;
  const routable = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  const method = observed.method.toLowerCase();
  const problems: string[] = [];
  const contentType = observed.headers.get('content-type') ?? '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(observed.text);
  } catch {
    parsed = undefined;
  }

  const templates = c.paths.filter((p) => p.pattern.test(routable));
  const template = templates.find((p) => (c.document.paths as Json)[p.template][method]);
  if (!template) {
    // The router's own answers: no route (404) or no such method on the route (405).
    const expected = templates.length ? 405 : 404;
    if (observed.status !== expected)
      problems.push(
        `status ${observed.status}: ${observed.method} ${routable} is not an operation (expected the router's ${expected})`,
      );
    else problems.push(...validateBody(c, '/components/schemas/NotFoundError', parsed));
    return problems;
  }

  const operationPointer = `/paths/${token(template.template)}/${method}`;
  const operation = (c.document.paths as Json)[template.template][method] as Json;
  const declared = operation.responses[String(observed.status)] as Json | undefined;
  if (!declared) {
    return [
      `status ${observed.status} is not documented for ${observed.method} ${template.template} (documented: ${Object.keys(operation.responses).join(', ')})`,
    ];
  }
  // What the service accepted must be what the document says it takes (the documented body can't be stricter).
  if (observed.status < 300 && observed.requestBody !== undefined && operation.requestBody) {
    let sent: unknown;
    try {
      sent = JSON.parse(observed.requestBody);
    } catch {
      sent = undefined;
    }
    const schemaPointer = `${operationPointer}/requestBody/content/application~1json/schema`;
    if (sent !== undefined)
      problems.push(...validateBody(c, schemaPointer, sent).map((problem) => `request ${problem}`));
  }
  const { value: response, pointer } = resolveRef(c.document, declared);
  const responsePointer = pointer ?? `${operationPointer}/responses/${observed.status}`;

  for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
    const { value } = resolveRef(c.document, header as Json);
    if (value.required && !observed.headers.has(name)) problems.push(`header ${name} is required and missing`);
  }
  const [mediaType] = Object.keys(response.content ?? {});
  if (!mediaType) return problems;
  if (!contentType.startsWith(mediaType))
    problems.push(`content type '${contentType}' is not the documented '${mediaType}'`);
  if (mediaType === 'application/json') {
    if (parsed === undefined) problems.push('body is not JSON');
    else problems.push(...validateBody(c, `${responsePointer}/content/${token(mediaType)}/schema`, parsed));
  }
  return problems;
}

/** Throws, failing the test, when a response does not conform to the document. */
export async function assertConformsToContract(observed: ObservedResponse): Promise<void> {
  const problems = await contractViolations(observed);
  if (problems.length > 0) {
    throw new Error(
      `response of ${observed.method} ${observed.target} (${observed.status}) does not match the OpenAPI document:\n  ${problems.join('\n  ')}\nbody: ${observed.text.slice(0, 2000)}`,
    );
  }
}
