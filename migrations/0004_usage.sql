-- Usage at a glance: cached prompt tokens per request; a rollup of the request
-- log at three resolutions (1 min for the last hour, 15 min for the day, 2 h for
-- the week), kept up to date by every log batch, so a chart reads at most
-- buckets x (connection, model, key, provider) rows however many requests were
-- logged; and a log of resilience state changes (breaker transitions,
-- connection cooldowns) for the per-provider timeline.
ALTER TABLE request_logs ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;

-- l0..l18: requests per latency bin (upper bounds [50, 100, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10000, 15000, 20000, 30000, 60000, 120000] ms, then above).
CREATE TABLE usage_rollup (
    res           INTEGER NOT NULL,
    bucket        INTEGER NOT NULL,
    connection_id TEXT NOT NULL,
    model         TEXT NOT NULL,
    api_key_id    TEXT NOT NULL,
    provider      TEXT NOT NULL,
    requests      INTEGER NOT NULL DEFAULT 0,
    errors        INTEGER NOT NULL DEFAULT 0,
    tokens_in     INTEGER NOT NULL DEFAULT 0,
    tokens_out    INTEGER NOT NULL DEFAULT 0,
    tokens_cached INTEGER NOT NULL DEFAULT 0,
    l0 INTEGER NOT NULL DEFAULT 0,
    l1 INTEGER NOT NULL DEFAULT 0,
    l2 INTEGER NOT NULL DEFAULT 0,
    l3 INTEGER NOT NULL DEFAULT 0,
    l4 INTEGER NOT NULL DEFAULT 0,
    l5 INTEGER NOT NULL DEFAULT 0,
    l6 INTEGER NOT NULL DEFAULT 0,
    l7 INTEGER NOT NULL DEFAULT 0,
    l8 INTEGER NOT NULL DEFAULT 0,
    l9 INTEGER NOT NULL DEFAULT 0,
    l10 INTEGER NOT NULL DEFAULT 0,
    l11 INTEGER NOT NULL DEFAULT 0,
    l12 INTEGER NOT NULL DEFAULT 0,
    l13 INTEGER NOT NULL DEFAULT 0,
    l14 INTEGER NOT NULL DEFAULT 0,
    l15 INTEGER NOT NULL DEFAULT 0,
    l16 INTEGER NOT NULL DEFAULT 0,
    l17 INTEGER NOT NULL DEFAULT 0,
    l18 INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (res, bucket, connection_id, model, api_key_id, provider)
) WITHOUT ROWID;

INSERT INTO usage_rollup (res, bucket, connection_id, model, api_key_id, provider, requests, errors, tokens_in, tokens_out, tokens_cached, l0, l1, l2, l3, l4, l5, l6, l7, l8, l9, l10, l11, l12, l13, l14, l15, l16, l17, l18)
SELECT 60000, (created_at / 60000) * 60000, connection_id, model, api_key_id, provider, COUNT(*), SUM(CASE WHEN status >= 400 THEN 1 ELSE 0 END),
    SUM(prompt_tokens), SUM(completion_tokens), 0,
    SUM(CASE WHEN latency_ms > -1 AND latency_ms < 50 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 49 AND latency_ms < 100 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 99 AND latency_ms < 200 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 199 AND latency_ms < 300 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 299 AND latency_ms < 500 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 499 AND latency_ms < 750 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 749 AND latency_ms < 1000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 999 AND latency_ms < 1500 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 1499 AND latency_ms < 2000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 1999 AND latency_ms < 3000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 2999 AND latency_ms < 5000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 4999 AND latency_ms < 7500 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 7499 AND latency_ms < 10000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 9999 AND latency_ms < 15000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 14999 AND latency_ms < 20000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 19999 AND latency_ms < 30000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 29999 AND latency_ms < 60000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 59999 AND latency_ms < 120000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 119999 THEN 1 ELSE 0 END)
FROM request_logs GROUP BY 2, 3, 4, 5, 6;
INSERT INTO usage_rollup (res, bucket, connection_id, model, api_key_id, provider, requests, errors, tokens_in, tokens_out, tokens_cached, l0, l1, l2, l3, l4, l5, l6, l7, l8, l9, l10, l11, l12, l13, l14, l15, l16, l17, l18)
SELECT 900000, (created_at / 900000) * 900000, connection_id, model, api_key_id, provider, COUNT(*), SUM(CASE WHEN status >= 400 THEN 1 ELSE 0 END),
    SUM(prompt_tokens), SUM(completion_tokens), 0,
    SUM(CASE WHEN latency_ms > -1 AND latency_ms < 50 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 49 AND latency_ms < 100 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 99 AND latency_ms < 200 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 199 AND latency_ms < 300 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 299 AND latency_ms < 500 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 499 AND latency_ms < 750 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 749 AND latency_ms < 1000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 999 AND latency_ms < 1500 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 1499 AND latency_ms < 2000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 1999 AND latency_ms < 3000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 2999 AND latency_ms < 5000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 4999 AND latency_ms < 7500 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 7499 AND latency_ms < 10000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 9999 AND latency_ms < 15000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 14999 AND latency_ms < 20000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 19999 AND latency_ms < 30000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 29999 AND latency_ms < 60000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 59999 AND latency_ms < 120000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 119999 THEN 1 ELSE 0 END)
FROM request_logs GROUP BY 2, 3, 4, 5, 6;
INSERT INTO usage_rollup (res, bucket, connection_id, model, api_key_id, provider, requests, errors, tokens_in, tokens_out, tokens_cached, l0, l1, l2, l3, l4, l5, l6, l7, l8, l9, l10, l11, l12, l13, l14, l15, l16, l17, l18)
SELECT 7200000, (created_at / 7200000) * 7200000, connection_id, model, api_key_id, provider, COUNT(*), SUM(CASE WHEN status >= 400 THEN 1 ELSE 0 END),
    SUM(prompt_tokens), SUM(completion_tokens), 0,
    SUM(CASE WHEN latency_ms > -1 AND latency_ms < 50 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 49 AND latency_ms < 100 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 99 AND latency_ms < 200 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 199 AND latency_ms < 300 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 299 AND latency_ms < 500 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 499 AND latency_ms < 750 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 749 AND latency_ms < 1000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 999 AND latency_ms < 1500 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 1499 AND latency_ms < 2000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 1999 AND latency_ms < 3000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 2999 AND latency_ms < 5000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 4999 AND latency_ms < 7500 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 7499 AND latency_ms < 10000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 9999 AND latency_ms < 15000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 14999 AND latency_ms < 20000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 19999 AND latency_ms < 30000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 29999 AND latency_ms < 60000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 59999 AND latency_ms < 120000 THEN 1 ELSE 0 END),
    SUM(CASE WHEN latency_ms > 119999 THEN 1 ELSE 0 END)
FROM request_logs GROUP BY 2, 3, 4, 5, 6;

CREATE TABLE state_events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    at            INTEGER NOT NULL,
    provider      TEXT NOT NULL,
    connection_id TEXT NOT NULL DEFAULT '',
    kind          TEXT NOT NULL,
    state         TEXT NOT NULL,
    until         INTEGER NOT NULL DEFAULT 0,
    detail        TEXT NOT NULL DEFAULT ''
);
CREATE INDEX idx_state_events_at ON state_events(at);
