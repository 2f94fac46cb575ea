CREATE TABLE "pool_proxy_targets" (
	"proxy_id" bigint NOT NULL,
	"name" text NOT NULL,
	"ok" boolean NOT NULL,
	"status" integer,
	"response_time_ms" real,
	"last_checked_at" timestamp with time zone,
	"hour_at" integer NOT NULL,
	"hours" "bytea" NOT NULL,
	CONSTRAINT "pool_proxy_targets_proxy_id_name_pk" PRIMARY KEY("proxy_id","name")
);
--> statement-breakpoint
DROP INDEX "pool_proxies_address_uq";--> statement-breakpoint
ALTER TABLE "pool_proxies" ADD COLUMN "protocol" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "pool_proxy_targets" ADD CONSTRAINT "pool_proxy_targets_proxy_id_pool_proxies_id_fk" FOREIGN KEY ("proxy_id") REFERENCES "public"."pool_proxies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "pool_proxies_address_uq" ON "pool_proxies" USING btree ("pool_id","host","port","username","password","protocol");--> statement-breakpoint
ALTER TABLE "pool_proxy_targets" SET (fillfactor = 50);--> statement-breakpoint
CREATE OR REPLACE VIEW "pool_proxy_rows" AS
SELECT p."id", p."pool_id", p."host", p."port", p."username", p."password", p."format", s."status", s."failures", s."checks",
       p."type", p."protocols", p."anonymity", p."https", p."origin", p."country", p."country_name", p."location", p."isp", p."asn",
       s."status_code", s."response_time_ms", s."error_code", s."error_message", s."latency_p50_ms", s."uptime_h24_ppm", s."history",
       p."first_seen_at", s."last_checked_at", s."last_change_at", s."next_check_at", p."protocol"
FROM "pool_proxies" p JOIN "pool_proxy_state" s ON s."proxy_id" = p."id";
