/** Job: resumes imports whose worker died (lease run out), and settles lists whose writer died, every few minutes. */
import { sweepImports } from '../shared/imports/sweeper.js';
import { jobHandler, logger } from '../shared/observability/index.js';
import { sweepListWriters } from '../shared/subscribers/index.js';

export const handler = jobHandler('importsSweeper', async () => {
  const summary = await sweepImports();
  if (summary.resumed.length > 0) logger.warn('imports resumed', { resumed: summary.resumed, running: summary.running });
  const writers = await sweepListWriters();
  if (writers.settled.length > 0 || writers.outboxes > 0) logger.warn('list writers settled', { ...writers });
  return { ...summary, writers };
});
