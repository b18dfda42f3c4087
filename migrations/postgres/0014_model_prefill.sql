-- 0014 (PostgreSQL): what the gateway learned of each (connection, model)'s
-- assistant prefill, mirroring ../0014_model_prefill.sql. Each instance loads
-- it at start and writes what it learns; no change feed (a learned refusal
-- costs another instance at most one refused continuation until its restart).
CREATE TABLE model_prefill (
    connection_id TEXT NOT NULL,
    model         TEXT NOT NULL,
    state         TEXT NOT NULL,
    source        TEXT NOT NULL,
    learned_at    BIGINT NOT NULL,
    PRIMARY KEY (connection_id, model)
);
