/** Job: assembles the daily event files (schedule shortly after midnight UTC, or `{"date":"YYYY-MM-DD"}` by hand). */
import { runDailyAssembly, type AssembleRequest } from '../shared/events/daily.js';
import { s3EventStore } from '../shared/events/store.js';
import { jobHandler, logger } from '../shared/observability/index.js';
import { recordAssembledDays } from '../shared/stats/events-daily.js';

const store = s3EventStore();

export const handler = jobHandler('eventsAssemble', async (event: AssembleRequest | undefined) => {
  const summary = await runDailyAssembly(store, event ?? {});
  await recordAssembledDays(summary.files);
  const built = summary.files.filter((f) => !f.upToDate || !f.raw.upToDate);
  const hoursBuilt = built.reduce((n, f) => n + (f.hoursBuilt?.length ?? 0), 0);
  logger.info('event files assembled', { days: summary.days, built: built.length, upToDate: summary.files.length - built.length, hoursBuilt });
  return summary;
});
