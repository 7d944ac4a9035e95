/** A count as the route descriptions write it (20,000): descriptions are built from the constants they describe. */
export const count = (n: number): string => n.toLocaleString('en-US');
