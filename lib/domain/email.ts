import * as z from 'zod/mini';

/**
 * E-mail addresses as customers are found and kept unique by. Pure; its own module, since
 * the functions that look customers up by e-mail need nothing else of the customer rules.
 */

// zod's default e-mail pattern is the pragmatic one we want (no spaces, no leading, trailing or
// consecutive dots in the local part, dotted domain with an alphabetic TLD, no quoted or IP-literal forms).
const emailSchema = z.email();

/** RFC 5321 limits on top of the pattern: 64 characters before the `@`, 254 in all. */
export function isValidEmail(email: string): boolean {
  const at = email.lastIndexOf('@');
  return email.length <= 254 && at > 0 && at <= 64 && emailSchema.safeParse(email).success;
}

/**
 * The form in which e-mails are compared: per-platform uniqueness and the `email` filter are
 * case-insensitive over the whole address (providers treat the local part case-insensitively in practice).
 */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}
