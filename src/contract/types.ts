/**
 * The contract's types for the dashboard (src/web/client): `export type`
 * only, so a browser module's `import type` of it brings no code (no
 * TypeBox) into the bundle. .dependency-cruiser.cjs lets the dashboard
 * import this module and no other of src/contract; test/unit/contract-types.test.ts
 * checks that it stays types only and that the dashboard imports it with `import type`.
 */
export type { CheckJobBody } from './jobs';
export type { PoolBody, PoolProxyBody } from './pools';
export type { ProgressMessageBody } from './ws';
export type { WebhookBody, WebhookDeliveryBody } from './webhooks';
