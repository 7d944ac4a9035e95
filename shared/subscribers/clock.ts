/**
 * The time of subscriber changes (`updatedAt`, consent records, the events' dates and the day a change counts
 * on in the statistics, daily.ts). Leases and deadlines keep Date.now. A test moves it to make changes "on
 * another day" without moving the clock the AWS SDK signs with.
 */
export const changeClock = { now: (): number => Date.now() };
