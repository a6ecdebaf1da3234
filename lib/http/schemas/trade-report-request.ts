import * as z from 'zod/mini';
import { tradeReportBody } from '../../domain/trade-report-fields.js';

// The body of POST /trades as the API description shows it: the fields, their limits and descriptions are the
// ones `validateTradeReport` checks a report with (`lib/domain/trade-report-fields.ts`). The rules across
// fields need the caller and the time, so validation adds them to this schema; JSON Schema can't express them,
// and the field descriptions say them in words.
export const tradeReportRequest = tradeReportBody.check(
  z.meta({ id: 'TradeReport', description: 'A trade to settle. Every problem is reported at once in one 400.' }),
);
