/** The listings' item schema with the reader links, in a module of its own: only the listing routes' group imports it. */
import * as v from 'valibot';
import { SubscriberOutputSchema } from '../subscribers/schemas.js';

/** A subscriber as the listings return it (spec 2.3) with the reader's links (kept out of the subscriber schemas: the import worker bundles those). */
export const ListedSubscriberSchema = v.object({
  ...SubscriberOutputSchema.entries,
  unsubscribe_url: v.pipe(v.string(), v.description('The reader\'s unsubscribe link for this list (RFC 8058 one-click: POST `List-Unsubscribe=One-Click`); docs/api.md, "Reader links"')),
  preferences_url: v.pipe(v.string(), v.description("The reader's preference centre (every list of the client the reader is in)")),
});
