-- 0005 (PostgreSQL): model lockouts and model cooldowns shared by the
-- instances, mirroring ../0005_model_locks.sql. One row per (layer, lock key):
-- the newest lock written by any instance, or a tombstone (cleared, expires_at
-- = the clear time) telling the others to drop it. Pruned shortly after expiry.
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
    locked_at     BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL,
    cleared       BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (layer, lock_key)
);
CREATE INDEX idx_model_locks_expires ON model_locks(expires_at);

-- Change feed topic model_locks: a new lock or a clear (pruning expired rows
-- notifies nobody).
CREATE TRIGGER trg_model_locks_changes AFTER INSERT OR UPDATE ON model_locks FOR EACH STATEMENT EXECUTE FUNCTION omniroute_notify_change();
