/** Job: resumes imports whose worker died (lease run out), every few minutes. */
import { sweepImports } from '../shared/imports/sweeper.js';
import { jobHandler, logger } from '../shared/observability/index.js';

export const handler = jobHandler('importsSweeper', async () => {
  const summary = await sweepImports();
  if (summary.resumed.length > 0) logger.warn('imports resumed', { resumed: summary.resumed, running: summary.running });
  return summary;
});
