-- 0019: on PostgreSQL a request holding two team-wide slots (a connection's
-- maxConcurrent and a model's cap) takes both in one statement. SQLite's
-- single instance keeps its limits in memory: nothing to do.
SELECT 1;
