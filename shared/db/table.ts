/**
 * The single table's definition: the one place that names its keys, indexes
 * and TTL attribute. It feeds the CDK `Table`, the local/test table creation
 * and the key builders.
 */
export const tableDefinition = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'ttl',
  globalIndexes: [
    /** Subscribers of a list by status (filtered paging); other per-owner secondary orders. */
    { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    /** All lists of one email within a client (users/delete, bounces). */
    { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  ],
} as const;

export type GlobalIndexName = (typeof tableDefinition.globalIndexes)[number]['name'];
