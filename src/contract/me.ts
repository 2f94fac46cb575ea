/** GET /me: the account, its history and its usage. */
import { Type as t, type Static } from '@sinclair/typebox';
import { CHECK_TYPES } from '../proxy/types';
import { SubscriptionDetail } from './checks';
import { closed, int0, oneOf, orNull } from './common';
import { JOB_STATUSES } from './jobs';

/** The examples the document shows on these schemas (OpenAPI `examples`). */
export const ME_EXAMPLE = {
  user: {
    id: '0b8f3c1e-4b7a-4e55-9c2f-0a1b2c3d4e5f',
    email: 'demo@localhost',
    checks: 997,
    breakdown: { root_balance: 997, temp_balance: 0 },
    subscription_detail: { UnlimitedPro: false },
  },
  history: [
    {
      id: 1,
      total_checked: 3,
      total_working: 2,
      result_url: 'http://127.0.0.1:3000/result/3q2-7wEAAABh1nLpAAAAAA.json?token=5f0c…&expires=1790000000',
      proxy_type: 'http',
      scanned_at: '2026-11-22T10:00:00.000Z',
      status: 'completed',
      error: null,
    },
  ],
  history_count: 1,
  usage_last_30_days: [{ day: '2026-10-24', total_checked: 0 }, { day: '…', total_checked: 0 }, { day: '2026-11-22', total_checked: 3 }],
};

export const HistoryEntry = t.Object(
  {
    id: t.Integer(),
    total_checked: int0(),
    total_working: int0(),
    result_url: orNull(t.String()),
    proxy_type: oneOf(CHECK_TYPES),
    scanned_at: t.String({ format: 'date-time' }),
    status: oneOf(JOB_STATUSES),
    error: orNull(t.String()),
  },
  closed,
);

export const Me = t.Object(
  {
    user: t.Object(
      {
        id: t.String({ format: 'uuid' }),
        email: t.String(),
        checks: int0(),
        breakdown: t.Object({ root_balance: int0(), temp_balance: int0() }, closed),
        subscription_detail: SubscriptionDetail,
      },
      closed,
    ),
    history: t.Array(HistoryEntry, { maxItems: 30 }),
    history_count: int0(),
    usage_last_30_days: t.Array(t.Object({ day: t.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' }), total_checked: int0() }, closed), { minItems: 30, maxItems: 30 }),
    gateway: t.Optional(
      t.Object(
        { connections_24h: int0(), bytes_24h: int0() },
        { ...closed, description: 'Gateway use of the last 24 hours (counted, not charged): connections and bytes relayed, as counted by the answering node' },
      ),
    ),
  },
  { ...closed, examples: [ME_EXAMPLE] },
);
export type MeBody = Static<typeof Me>;
