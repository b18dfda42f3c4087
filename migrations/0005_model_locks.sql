-- Model lockouts and model cooldowns shared by the instances of a team server
-- (written only on PostgreSQL; the desktop keeps them in memory, and the table
-- stays empty in a SQLite file, kept so both dialects share one schema and
-- import-db / export copy it). One row per (layer, lock key): the newest lock
-- written by any instance, or a tombstone (cleared = 1, expires_at = the clear
-- time) telling the others to drop it. Rows are pruned shortly after expiry.
CREATE TABLE model_locks (
    layer         TEXT NOT NULL,
    lock_key      TEXT NOT NULL,
    provider      TEXT NOT NULL,
    connection_id TEXT NOT NULL,
    model         TEXT NOT NULL,
    scope         TEXT NOT NULL,
    reason        TEXT NOT NULL DEFAULT '',
    status        INTEGER NOT NULL DEFAULT 0,
    failure_count INTEGER NOT NULL DEFAULT 0,
    locked_at     INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    cleared       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (layer, lock_key)
);
CREATE INDEX idx_model_locks_expires ON model_locks(expires_at);
