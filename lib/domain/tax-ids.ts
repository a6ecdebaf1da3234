/**
 * Tax ids as the customer rules take them and every response shows them. Pure, and kept
 * apart from the rest of a customer's identity (countries, phone numbers), whose reference data the functions
 * that only show a stored customer have no use for.
 */

/** The digits or characters a response may show of a tax id: its last four, never more. */
export function taxIdLastFour(taxId: string): string {
  return taxId.slice(-4);
}

/** How a stored tax id is answered: masked to its last four characters. */
export function maskedTaxId(lastFour: string): string {
  return `*****${lastFour}`;
}

/**
 * A tax id in the one form it is stored (digits and letters only), or the problem with it. A US tax id
 * (the customer is a US citizen or resident and gives no other citizenship) is an SSN or ITIN: nine digits,
 * optionally as `NNN-NN-NNNN`, with no all-zero group and not starting with 000 or 666 (never issued).
 * Other countries' TINs vary in form: 4 to 20 letters and digits, optionally grouped by spaces or hyphens.
 */
export function parseTaxId(input: string, us: boolean): { value: string } | { problem: string } {
  const text = input.trim();
  if (us) {
    const match = /^(\d{3})-?(\d{2})-?(\d{4})$/.exec(text);
    if (!match) return { problem: 'must be a 9-digit SSN or ITIN (NNNNNNNNN or NNN-NN-NNNN)' };
    const [, area, group, serial] = match as unknown as [string, string, string, string];
    if (area === '000' || area === '666' || group === '00' || serial === '0000')
      return { problem: 'is not a number the IRS or SSA issues' };
    return { value: `${area}${group}${serial}` };
  }
  if (!/^[A-Za-z0-9](?:[A-Za-z0-9 -]*[A-Za-z0-9])?$/.test(text))
    return { problem: 'must be letters and digits (spaces or hyphens may group them)' };
  const compact = text.replace(/[ -]/g, '').toUpperCase();
  if (compact.length < 4 || compact.length > 20) return { problem: 'must have 4 to 20 letters and digits' };
  return { value: compact };
}

/**
 * An ITIN as the reference API tells it from an SSN: nine digits starting with 9, here
 * also in the `NNN-NN-NNNN` form `parseTaxId` takes. The IRS issues ITINs to people who cannot have an SSN.
 */
export function isItin(input: string): boolean {
  return /^9\d{2}-?\d{2}-?\d{4}$/.test(input.trim());
}
