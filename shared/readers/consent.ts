/** Reading the consent records a subscriber item keeps (shared/subscribers/rules.ts stores each as JSON text). */
import type { ConsentRecord } from '../subscribers/types.js';

/** The consent records of a stored subscriber, oldest first. */
export function consentRecords(item: { consent?: string[] }): ConsentRecord[] {
  return (item.consent ?? []).map((text) => JSON.parse(text) as ConsentRecord);
}
