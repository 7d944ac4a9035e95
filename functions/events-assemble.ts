/** Job: assembles the daily event files (schedule shortly after midnight UTC, or `{"date":"YYYY-MM-DD"}` by hand). */
import { runDailyAssembly, type AssembleRequest } from '../shared/events/daily.js';
import { s3EventStore } from '../shared/events/store.js';

const store = s3EventStore();

export const handler = async (event: AssembleRequest = {}) => {
  const summary = await runDailyAssembly(store, event);
  const built = summary.files.filter((f) => !f.upToDate);
  console.log(JSON.stringify({ level: 'info', message: 'event files assembled', days: summary.days, built: built.length, upToDate: summary.files.length - built.length }));
  return summary;
};
