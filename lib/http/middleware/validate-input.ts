import type * as z from 'zod/mini';
import { ValidationError } from '../../domain/errors.js';
import { formatIssues } from '../../domain/validation.js';
// zod's English messages, registered before any schema parses a request.
import '../zod.js';
import type { ServiceMiddleware } from '../types.js';

interface InputSchemas {
  query?: z.ZodMiniType;
  body?: z.ZodMiniType;
  path?: z.ZodMiniType;
}

/**
 * Parses query, path and body with the route's zod schemas and reports every issue of all three at once.
 * Schemas strip unknown fields, so nothing a client adds is stored or echoed.
 */
export function validateInput(schemas: InputSchemas): ServiceMiddleware {
  return {
    before: (request) => {
      const { event } = request;
      const svc = request.context.svc;
      const errors: string[] = [];
      const input: NonNullable<typeof svc.input> = {};
      const parse = (part: keyof InputSchemas, value: unknown, root: string) => {
        const schema = schemas[part];
        if (!schema) return;
        const result = schema.safeParse(value);
        if (result.success) input[part] = result.data;
        else errors.push(...formatIssues(result.error.issues, root));
      };
      parse('path', event.pathParameters ?? {}, 'path');
      parse('query', event.queryStringParameters ?? {}, 'query');
      parse('body', svc.body ?? {}, 'body');
      if (errors.length) throw new ValidationError(errors);
      svc.input = input;
    },
  };
}
