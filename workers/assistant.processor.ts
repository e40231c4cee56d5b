import type { ReplyJobData } from "./queues";
import type { JobHandlers } from "./job-handlers";

/** Assistant replies, one job per user message and attempt, and the watchdog for replies that never came. */
export const assistantHandlers: JobHandlers = {
  reply: async (job, { services }) => {
    const { messageId, attempt } = job.data as ReplyJobData;
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    return { outcome: await services.assistant.reply(messageId, attempt, lastAttempt) };
  },
  "expire-stale-replies": async (_job, { services }) => ({ expired: await services.assistant.expireStale() }),
};
