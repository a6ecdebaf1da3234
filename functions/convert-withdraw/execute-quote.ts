import * as z from 'zod/mini';
import { executeConvertQuote } from '../../lib/convert-withdraw/execute-convert-quote.js';
import { apiHandler } from '../../lib/http/api-handler.js';
import { text } from '../../lib/http/zod.js';

const body = z.object({ quote_id: text(100) });

/** POST /convert_withdraw/execute: executes the quote once, booking its trade and a PENDING withdrawal. */
export const handler = apiHandler({ body }, async ({ body, auth }) => ({ message: await executeConvertQuote(auth, body.quote_id) }));
