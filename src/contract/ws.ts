/** The WebSocket messages of /ws: a check's progress (DECISIONS "Progress (WebSocket)"). */
import { Type as t, type Static } from '@sinclair/typebox';
import { JOB_ID_PATTERN } from '../job-id';
import { closed, int0, oneOf } from './common';

export const PROGRESS_STATUSES = ['in_progress', 'completed', 'failed'] as const;

export const ProgressMessage = t.Object(
  {
    jobId: t.String(),
    status: oneOf(PROGRESS_STATUSES),
    currentStep: t.String({ description: 'validating, checking_balance, proxy_check_batch_<i>_of_<n>, custom_url_validation, writing_results, completed' }),
    stepsCompleted: int0(),
    progress: t.Number({ minimum: 0, maximum: 100 }),
    eta: t.Union([t.Integer({ minimum: 0 }), t.Null()]),
    details: t.Object({ message: t.String(), batches_done: int0(), working_so_far: int0(), checked: int0(), total: int0() }, closed),
    timestamp: t.String({ format: 'date-time' }),
    result_url: t.Optional(t.String({ description: 'Final `completed` message, for a subscriber authenticated as the job\'s owner' })),
  },
  { ...closed, description: 'A WebSocket message on /ws (not an HTTP response)' },
);
export type ProgressMessageBody = Static<typeof ProgressMessage>;

/** GET /ws: what to follow, and an optional key. */
export const WsQuery = t.Object({
  jobId: t.Optional(t.String({ pattern: JOB_ID_PATTERN, description: 'The job to follow (required unless `pool` is given)' })),
  pool: t.Optional(t.String({ description: "A pool's id: follow its events instead (key required)" })),
  apiKey: t.Optional(t.String({ description: 'Optional key (also accepted as X-API-Key or Authorization: Bearer)' })),
});
