-- 0014 (PostgreSQL): what the gateway learned of each (connection, model)'s
-- assistant prefill, mirroring ../0014_model_prefill.sql. Each instance loads
-- it at start, writes what it learns and reloads it on the change feed, so a
-- refusal one instance learned is never asked by the others either.
CREATE TABLE model_prefill (
    connection_id TEXT NOT NULL,
    model         TEXT NOT NULL,
    state         TEXT NOT NULL,
    source        TEXT NOT NULL,
    learned_at    BIGINT NOT NULL,
    PRIMARY KEY (connection_id, model)
);

-- Change feed topic model_prefill: a learned or probed state (a deleted
-- connection's rows go with the connection's own notification).
CREATE TRIGGER trg_model_prefill_changes AFTER INSERT OR UPDATE ON model_prefill FOR EACH STATEMENT EXECUTE FUNCTION omniroute_notify_change();
