CREATE TABLE "result_chunks" (
	"result_id" text NOT NULL,
	"seq" integer NOT NULL,
	"data" "bytea" NOT NULL,
	CONSTRAINT "result_chunks_result_id_seq_pk" PRIMARY KEY("result_id","seq")
);
--> statement-breakpoint
CREATE TABLE "result_files" (
	"id" text PRIMARY KEY NOT NULL,
	"bytes" bigint NOT NULL,
	"chunks" integer NOT NULL,
	"last_written" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "result_files_sizes_nonneg" CHECK ("result_files"."bytes" >= 0 AND "result_files"."chunks" >= 0)
);
--> statement-breakpoint
ALTER TABLE "result_chunks" ADD CONSTRAINT "result_chunks_result_id_result_files_id_fk" FOREIGN KEY ("result_id") REFERENCES "public"."result_files"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "result_files_last_written_idx" ON "result_files" USING btree ("last_written","id");