-- 0018: on PostgreSQL the team-wide limits' tables become UNLOGGED (their
-- statements no longer wait for the WAL's flush). SQLite's single instance
-- keeps its limits in memory and leaves those tables empty: nothing to do.
SELECT 1;
