/** Job: assembles the closed hours of the open day (hourly, a few minutes past the hour), so a download of today only assembles the last hour. */
import { runHourlyAssembly, type HourlyRequest } from '../shared/events/hourly.js';
import { s3EventStore } from '../shared/events/store.js';
import { jobHandler, logger } from '../shared/observability/index.js';
import { recordHourCounts } from '../shared/stats/events-daily.js';

const store = s3EventStore();

export const handler = jobHandler('eventsAssembleHours', async (event: HourlyRequest | undefined) => {
  const summary = await runHourlyAssembly(store, event ?? {}, new Date(), { onHours: recordHourCounts });
  logger.info('event hours assembled', {
    days: summary.days,
    checked: summary.checked,
    hoursBuilt: summary.built.reduce((n, b) => n + b.hours.length, 0),
    rawObjectsRead: summary.built.reduce((n, b) => n + b.rawObjectsRead, 0),
    skipped: summary.skipped.length,
  });
  return summary;
});
