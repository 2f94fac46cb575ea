/** GET /me: the account, its history and its usage. */
import { Type as t, type Static } from '@sinclair/typebox';
import { CHECK_TYPES } from '../proxy/types';
import { SubscriptionDetail } from './checks';
import { closed, int0, oneOf, orNull } from './common';
import { JOB_STATUSES } from './jobs';

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
  closed,
);
export type MeBody = Static<typeof Me>;
