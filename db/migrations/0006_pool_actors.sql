CREATE TABLE "pool_leases" (
	"pool_id" text PRIMARY KEY NOT NULL,
	"node_id" text NOT NULL,
	"token" bigint NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"run_id" text NOT NULL,
	"settled" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pool_owners" (
	"node_id" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "pool_proxy_state" (
	"proxy_id" bigint PRIMARY KEY NOT NULL,
	"status" text DEFAULT 'unchecked' NOT NULL,
	"failures" integer DEFAULT 0 NOT NULL,
	"checks" integer DEFAULT 0 NOT NULL,
	"status_code" integer,
	"response_time_ms" real,
	"error_code" text,
	"error_message" text,
	"latency_p50_ms" integer,
	"uptime_h24_ppm" integer,
	"history" "bytea",
	"last_checked_at" timestamp with time zone,
	"last_change_at" timestamp with time zone,
	"next_check_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "pool_proxy_state_status_valid" CHECK ("pool_proxy_state"."status" IN ('unchecked', 'working', 'failed'))
);
--> statement-breakpoint
ALTER TABLE "pool_proxy_state" SET (fillfactor = 50);--> statement-breakpoint
INSERT INTO "pool_proxy_state" ("proxy_id", "status", "failures", "checks", "status_code", "response_time_ms", "error_code", "error_message", "latency_p50_ms", "uptime_h24_ppm", "history", "last_checked_at", "last_change_at", "next_check_at")
SELECT "id", "status", "failures", "checks", "status_code", "response_time_ms", "error_code", "error_message", "latency_p50_ms", "uptime_h24_ppm", "history", "last_checked_at", "last_change_at", "next_check_at" FROM "pool_proxies";--> statement-breakpoint
ALTER TABLE "pool_proxies" DROP CONSTRAINT "pool_proxies_status_valid";--> statement-breakpoint
DROP INDEX "pool_proxies_due_idx";--> statement-breakpoint
DROP INDEX "pool_proxies_latency_idx";--> statement-breakpoint
DROP INDEX "pool_proxies_uptime_idx";--> statement-breakpoint
DROP INDEX "pool_proxies_checked_idx";--> statement-breakpoint
ALTER TABLE "pool_proxy_state" ADD CONSTRAINT "pool_proxy_state_proxy_id_pool_proxies_id_fk" FOREIGN KEY ("proxy_id") REFERENCES "public"."pool_proxies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pool_proxies" DROP COLUMN "status";--> statement-breakpoint
ALTER TABLE "pool_proxies" DROP COLUMN "failures";--> statement-breakpoint
ALTER TABLE "pool_proxies" DROP COLUMN "checks";--> statement-breakpoint
ALTER TABLE "pool_proxies" DROP COLUMN "status_code";--> statement-breakpoint
ALTER TABLE "pool_proxies" DROP COLUMN "response_time_ms";--> statement-breakpoint
ALTER TABLE "pool_proxies" DROP COLUMN "error_code";--> statement-breakpoint
ALTER TABLE "pool_proxies" DROP COLUMN "error_message";--> statement-breakpoint
ALTER TABLE "pool_proxies" DROP COLUMN "latency_p50_ms";--> statement-breakpoint
ALTER TABLE "pool_proxies" DROP COLUMN "uptime_h24_ppm";--> statement-breakpoint
ALTER TABLE "pool_proxies" DROP COLUMN "history";--> statement-breakpoint
ALTER TABLE "pool_proxies" DROP COLUMN "last_checked_at";--> statement-breakpoint
ALTER TABLE "pool_proxies" DROP COLUMN "last_change_at";--> statement-breakpoint
ALTER TABLE "pool_proxies" DROP COLUMN "next_check_at";--> statement-breakpoint
CREATE VIEW "pool_proxy_rows" AS
SELECT p."id", p."pool_id", p."host", p."port", p."username", p."password", p."format", s."status", s."failures", s."checks",
       p."type", p."protocols", p."anonymity", p."https", p."origin", p."country", p."country_name", p."location", p."isp", p."asn",
       s."status_code", s."response_time_ms", s."error_code", s."error_message", s."latency_p50_ms", s."uptime_h24_ppm", s."history",
       p."first_seen_at", s."last_checked_at", s."last_change_at", s."next_check_at"
FROM "pool_proxies" p JOIN "pool_proxy_state" s ON s."proxy_id" = p."id";
