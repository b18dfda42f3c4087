-- 0006: the request log loses its created_at index. No query reads the log by
-- time (pages go by id, charts read usage_rollup, retention deletes by id), and
-- the index cost every logged request a second B-tree insert and its pages in
-- every batch's commit (issue 19: ≈ 1 µs of ≈ 6 per row on SQLite). Rows stay.
DROP INDEX IF EXISTS idx_request_logs_created;
