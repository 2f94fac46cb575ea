CREATE TABLE "pool_proxies" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"pool_id" text NOT NULL,
	"host" text NOT NULL,
	"port" integer NOT NULL,
	"username" text DEFAULT '' NOT NULL,
	"password" text DEFAULT '' NOT NULL,
	"format" text DEFAULT 'standard' NOT NULL,
	"status" text DEFAULT 'unchecked' NOT NULL,
	"failures" integer DEFAULT 0 NOT NULL,
	"checks" integer DEFAULT 0 NOT NULL,
	"type" text,
	"protocols" smallint DEFAULT 0 NOT NULL,
	"anonymity" text,
	"https" boolean,
	"origin" text,
	"country" text,
	"country_name" text,
	"location" text,
	"isp" text,
	"asn" integer,
	"status_code" integer,
	"response_time_ms" real,
	"error_code" text,
	"error_message" text,
	"latency_p50_ms" integer,
	"uptime_h24_ppm" integer,
	"history" "bytea",
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_checked_at" timestamp with time zone,
	"last_change_at" timestamp with time zone,
	"next_check_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "pool_proxies_status_valid" CHECK ("pool_proxies"."status" IN ('unchecked', 'working', 'failed')),
	CONSTRAINT "pool_proxies_port_valid" CHECK ("pool_proxies"."port" BETWEEN 1 AND 65535)
);
--> statement-breakpoint
CREATE TABLE "pool_rounds" (
	"pool_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"finished_at" timestamp with time zone,
	"planned" integer NOT NULL,
	"checked" integer DEFAULT 0 NOT NULL,
	"working" integer DEFAULT 0 NOT NULL,
	"charged" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "pool_rounds_pool_id_seq_pk" PRIMARY KEY("pool_id","seq")
);
--> statement-breakpoint
CREATE TABLE "pools" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"name" text NOT NULL,
	"type" text NOT NULL,
	"region" text NOT NULL,
	"interval_s" integer NOT NULL,
	"timeout_ms" integer NOT NULL,
	"https" boolean DEFAULT true NOT NULL,
	"custom_urls" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"sources" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"state" text DEFAULT 'active' NOT NULL,
	"paused_reason" text,
	"round_seq" bigint DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_round_at" timestamp with time zone,
	CONSTRAINT "pools_state_valid" CHECK ("pools"."state" IN ('active', 'paused')),
	CONSTRAINT "pools_interval_positive" CHECK ("pools"."interval_s" > 0)
);
--> statement-breakpoint
ALTER TABLE "pool_proxies" ADD CONSTRAINT "pool_proxies_pool_id_pools_id_fk" FOREIGN KEY ("pool_id") REFERENCES "public"."pools"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pool_rounds" ADD CONSTRAINT "pool_rounds_pool_id_pools_id_fk" FOREIGN KEY ("pool_id") REFERENCES "public"."pools"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pools" ADD CONSTRAINT "pools_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "pool_proxies_address_uq" ON "pool_proxies" USING btree ("pool_id","host","port","username","password");--> statement-breakpoint
CREATE INDEX "pool_proxies_due_idx" ON "pool_proxies" USING btree ("pool_id","next_check_at");--> statement-breakpoint
CREATE INDEX "pool_proxies_latency_idx" ON "pool_proxies" USING btree ("pool_id","status",COALESCE("latency_p50_ms", 2147483647),"id");--> statement-breakpoint
CREATE INDEX "pool_proxies_uptime_idx" ON "pool_proxies" USING btree ("pool_id","status",COALESCE("uptime_h24_ppm", -1) DESC,"id" DESC);--> statement-breakpoint
CREATE INDEX "pool_proxies_checked_idx" ON "pool_proxies" USING btree ("pool_id","status",COALESCE("last_checked_at", '1970-01-01T00:00:00Z'::timestamptz) DESC,"id" DESC);--> statement-breakpoint
CREATE INDEX "pool_rounds_pool_started_idx" ON "pool_rounds" USING btree ("pool_id","started_at");--> statement-breakpoint
CREATE INDEX "pools_account_created_idx" ON "pools" USING btree ("account_id","created_at");