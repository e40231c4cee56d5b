import type { Job } from "bullmq";
import type { Services } from "../src/app/services";
import type { Logger } from "../src/platform/common/logger";

/**
 * The contract between the worker host and the processors: a queue's handlers by job name, each given
 * the job and the services. Its own module, so the host (which lists the processors) and the
 * processors (which implement it) do not import each other.
 */
export type JobDeps = { services: Services; logger: Logger };
export type JobHandlers = Record<string, (job: Job, deps: JobDeps) => Promise<unknown>>;
