-- 0003 (PostgreSQL): queue time and wait reason of each request, mirroring ../0003_request_log_queue.sql.
ALTER TABLE request_logs ADD COLUMN queue_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE request_logs ADD COLUMN queue_reason TEXT NOT NULL DEFAULT '';
