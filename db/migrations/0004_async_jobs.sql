ALTER TABLE "scans" ADD COLUMN "total_proxies" integer;--> statement-breakpoint
ALTER TABLE "scans" ADD COLUMN "result" jsonb;--> statement-breakpoint
CREATE INDEX "scans_account_client_job_idx" ON "scans" USING btree ("account_id","client_job_id","created_at" DESC NULLS LAST);