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
ALTER TABLE "pool_proxy_targets" ADD CONSTRAINT "pool_proxy_targets_proxy_id_pool_proxies_id_fk" FOREIGN KEY ("proxy_id") REFERENCES "public"."pool_proxies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pool_proxy_targets" SET (fillfactor = 50);
