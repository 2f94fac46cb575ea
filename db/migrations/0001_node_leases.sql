CREATE TABLE "nodes" (
	"id" text PRIMARY KEY NOT NULL,
	"lease_until" timestamp with time zone NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"renewed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"version" text NOT NULL,
	"host" text,
	"pid" integer
);
--> statement-breakpoint
ALTER TABLE "scans" ADD COLUMN "node_id" text;