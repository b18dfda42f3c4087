-- Queue time and wait reason of each request (concurrency gate + request queue).
ALTER TABLE request_logs ADD COLUMN queue_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE request_logs ADD COLUMN queue_reason TEXT NOT NULL DEFAULT '';
