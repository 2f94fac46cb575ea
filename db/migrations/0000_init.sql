CREATE TABLE "accounts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"email" text NOT NULL,
	"root_balance" bigint DEFAULT 0 NOT NULL,
	"temp_balance" bigint DEFAULT 0 NOT NULL,
	"checks_used" bigint DEFAULT 0 NOT NULL,
	"unlimited_pro" boolean DEFAULT false NOT NULL,
	"unlimited_until" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "accounts_email_unique" UNIQUE("email"),
	CONSTRAINT "accounts_root_balance_nonneg" CHECK ("accounts"."root_balance" >= 0),
	CONSTRAINT "accounts_temp_balance_nonneg" CHECK ("accounts"."temp_balance" >= 0),
	CONSTRAINT "accounts_checks_used_nonneg" CHECK ("accounts"."checks_used" >= 0)
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"key_hash" text NOT NULL,
	"label" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash")
);
--> statement-breakpoint
CREATE TABLE "quota_ledger" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"delta" bigint NOT NULL,
	"temp_delta" bigint NOT NULL,
	"root_delta" bigint NOT NULL,
	"reason" text NOT NULL,
	"job_id" text,
	"units" bigint DEFAULT 0 NOT NULL,
	"balance_after" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "scans" (
	"id" serial PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"job_id" text NOT NULL,
	"proxy_type" text NOT NULL,
	"region" text NOT NULL,
	"timeout_ms" integer NOT NULL,
	"total_submitted" integer DEFAULT 0 NOT NULL,
	"total_checked" integer DEFAULT 0 NOT NULL,
	"total_working" integer DEFAULT 0 NOT NULL,
	"charged" integer DEFAULT 0 NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"result_ref" text,
	"error" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "scans_job_id_unique" UNIQUE("job_id"),
	CONSTRAINT "scans_counts_nonneg" CHECK ("scans"."total_checked" >= 0 AND "scans"."total_working" >= 0 AND "scans"."charged" >= 0)
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "quota_ledger" ADD CONSTRAINT "quota_ledger_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scans" ADD CONSTRAINT "scans_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "api_keys_account_idx" ON "api_keys" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "quota_ledger_account_created_idx" ON "quota_ledger" USING btree ("account_id","created_at");--> statement-breakpoint
CREATE INDEX "quota_ledger_job_idx" ON "quota_ledger" USING btree ("job_id");--> statement-breakpoint
CREATE INDEX "scans_account_created_idx" ON "scans" USING btree ("account_id","created_at" DESC NULLS LAST);--> statement-breakpoint
CREATE INDEX "scans_status_idx" ON "scans" USING btree ("status");