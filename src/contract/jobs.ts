/** The asynchronous checks' shapes: the 202 of POST /check(-raw) and GET /checks/{jobId}. */
import { Type as t, type Static } from '@sinclair/typebox';
import { JOB_ID_PATTERN } from '../job-id';
import { CHECK_RESPONSE_EXAMPLE, CheckResponse } from './checks';
import { closed, dateTime, int0, oneOf } from './common';

/** The examples the document shows on these schemas (OpenAPI `examples`). */
export const ACCEPTED_EXAMPLE = {
  jobId: 'my-job-1',
  status: 'running',
  status_url: 'http://127.0.0.1:3000/checks/my-job-1',
  progress_url: 'ws://127.0.0.1:3000/ws?jobId=my-job-1',
};
export const CHECK_JOB_EXAMPLE = {
  jobId: 'my-job-1',
  status: 'completed',
  created_at: '2026-11-22T10:00:00.000Z',
  finished_at: '2026-11-22T10:00:02.010Z',
  progress: { checked: 3, total: 3, working_so_far: 2 },
  result: CHECK_RESPONSE_EXAMPLE,
};

export const CheckAccepted = t.Object(
  {
    jobId: t.String({ pattern: JOB_ID_PATTERN }),
    status: t.Literal('running'),
    status_url: t.String({ format: 'uri', description: 'GET it for the state; DELETE it to cancel' }),
    progress_url: t.String({ format: 'uri', description: 'The WebSocket progress channel: /ws?jobId=' }),
  },
  { ...closed, examples: [ACCEPTED_EXAMPLE] },
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
  { ...closed, examples: [CHECK_JOB_EXAMPLE] },
);
export type CheckJobBody = Static<typeof CheckJob>;

/** GET and DELETE /checks/{jobId}. */
export const JobIdParams = t.Object({ jobId: t.String({ pattern: JOB_ID_PATTERN }) });
