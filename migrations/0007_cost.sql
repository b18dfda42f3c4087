-- 0007: what requests cost (issue 31). Each request-log row carries its cost
-- in USD (NULL when the model's price is unknown) and what a flat-rate
-- connection's answer would have cost at API prices; the usage rollup sums the
-- spend, what flat-rate connections saved, and the answers that could not be
-- priced; keys carry their budget and rate limits (JSON, '' for none).
ALTER TABLE request_logs ADD COLUMN cost_usd REAL;
ALTER TABLE request_logs ADD COLUMN saved_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE usage_rollup ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE usage_rollup ADD COLUMN saved_usd REAL NOT NULL DEFAULT 0;
ALTER TABLE usage_rollup ADD COLUMN unpriced INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN budget TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN limits TEXT NOT NULL DEFAULT '';
-- A key's spend in its budget's current period, charged atomically by every
-- instance of a team server (PostgreSQL; SQLite's single instance keeps it in
-- memory and leaves the table empty).
CREATE TABLE key_spend (
    api_key_id   TEXT PRIMARY KEY,
    period_start INTEGER NOT NULL,
    usd          REAL NOT NULL,
    tokens       INTEGER NOT NULL
);
