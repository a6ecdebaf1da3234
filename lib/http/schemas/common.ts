import * as z from 'zod/mini';
import { AMOUNT_PATTERN } from '../../domain/money.js';

// Response shapes for the API description (lib/openapi) and the contract tests. They say what the views
// return today; a field a view adds without its schema fails the contract tests, so the two move together.
// Objects are strict (`additionalProperties: false` in the document) so an undocumented field is caught.

/** A decimal amount as the wire carries it: a string, no sign, no exponent. */
export const amount = (description: string) => z.string().check(z.regex(AMOUNT_PATTERN), z.describe(description));

/** A balance: like an amount, but an account that may go negative (liquidity provider, ACH clearing) shows a sign. */
export const signedAmount = (description: string) =>
  z.string().check(z.regex(/^-?\d*\.?\d+$/), z.describe(description));

/** UNIX milliseconds. */
export const epochMs = (description: string) =>
  z.int().check(z.minimum(0), z.describe(`${description} (UNIX milliseconds)`));

/** An ISO 8601 instant, UTC. */
export const isoInstant = (description: string) => z.iso.datetime().check(z.describe(description));

export const described = <T extends z.ZodMiniType>(schema: T, description: string): T =>
  schema.check(z.describe(description)) as T;

/** The success envelope: the payload under `message`. */
export const messageOf = <T extends z.ZodMiniType>(payload: T) => z.object({ message: payload });

/** A list page: the items under `message`, with the page figures and the next page's cursor beside them. */
export const pageOf = <T extends z.ZodMiniType>(item: T) =>
  z.object({
    message: z.array(item),
    page: described(z.int().check(z.minimum(1)), 'This page, from 1.'),
    page_size: described(z.int().check(z.minimum(1)), 'Items per page.'),
    total_pages: described(
      z.nullable(z.int().check(z.minimum(1))),
      'Pages in the whole list (at least 1); null with `count` when the filters have no counter and match beyond the count budget.',
    ),
    count: described(
      z.nullable(z.int().check(z.minimum(0))),
      'Items in the whole list, exact. Null only for a filter combination without a stored counter whose records exceed 10,000 read.',
    ),
    next_cursor: described(z.nullable(z.string()), 'Pass as `cursor` for the next page; null on the last page.'),
  });

// ---- error bodies --------------------------------------------------------------------

export const errorList = z.object({ errors: z.array(z.string()).check(z.minLength(1)) }).check(
  z.meta({
    id: 'ErrorList',
    description: 'Every problem found, each `<field>: <what is wrong>` where a field is at fault.',
  }),
);

export const forbiddenError = z
  .object({ error: z.literal(true), message: z.string() })
  .check(z.meta({ id: 'ForbiddenError', description: 'Authentication or permission failure.' }));

export const notFoundError = z
  .object({ error: z.string() })
  .check(
    z.meta({ id: 'NotFoundError', description: "Unknown resource, or another platform's (never revealed to exist)." }),
  );

export const internalError = z
  .object({ error: z.literal('Internal Server Error') })
  .check(z.meta({ id: 'InternalError', description: 'An unexpected failure; no internals are shown.' }));

export const gatewayError = z.object({ message: z.string() }).check(
  z.meta({
    id: 'GatewayError',
    description: 'An answer of API Gateway itself (e.g. a body over 10 MB), before any function runs.',
  }),
);
