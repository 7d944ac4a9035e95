/** Reading the consent records a subscriber item keeps (shared/subscribers/rules.ts applyLine writes them). */
import type { ConsentRecord } from '../subscribers/types.js';

/** The consent records of a stored subscriber, oldest first (none: an empty list). */
export function consentRecords(item: { consent?: ConsentRecord[] }): ConsentRecord[] {
  return item.consent ?? [];
}
