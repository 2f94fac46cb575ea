/** The asynchronous checks' shapes: the 202 of POST /check(-raw) and GET /checks/{jobId}. */
import { Type as t, type Static } from '@sinclair/typebox';
import { JOB_ID_PATTERN } from '../job-id';
import { CheckResponse } from './checks';
import { closed, dateTime, int0, oneOf } from './common';

export const CheckAccepted = t.Object(
  {
    jobId: t.String({ pattern: JOB_ID_PATTERN }),
    status: t.Literal('running'),
    status_url: t.String({ format: 'uri', description: 'GET it for the state; DELETE it to cancel' }),
    progress_url: t.String({ format: 'uri', description: 'The WebSocket progress channel: /ws?jobId=' }),
  },
  closed,
);
export type CheckAcceptedBody = Static<typeof CheckAccepted>;

export const JOB_STATUSES = ['running', 'completed', 'failed', 'cancelled'] as const;

export const CheckJob = t.Object(
  {
    jobId: t.String({ pattern: JOB_ID_PATTERN }),
    status: oneOf(JOB_STATUSES),
    created_at: dateTime(),
    finished_at: t.Optional(dateTime({ description: 'Once the job ended' })),
    progress: t.Object(
      { checked: int0(), total: int0(), working_so_far: int0() },
      { ...closed, description: 'Proxies checked of the unique valid ones, and working so far (final numbers once ended)' },
    ),
    error: t.Optional(
      t.String({ description: 'failed / cancelled only: the stable code (interrupted, shutting_down, client_cancelled, client_disconnected, shard_failed, ...)' }),
    ),
    result: t.Optional(
      t.Object(CheckResponse.properties, { ...closed, description: 'completed only: the body POST /check answered (or would have), its links signed afresh' }),
    ),
  },
  closed,
);
export type CheckJobBody = Static<typeof CheckJob>;

/** GET and DELETE /checks/{jobId}. */
export const JobIdParams = t.Object({ jobId: t.String({ pattern: JOB_ID_PATTERN }) });
