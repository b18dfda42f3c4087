-- 0014: a team server's round two (issue 44): a key's tokens-per-minute
-- window across instances and one budget alert per team. SQLite's single
-- instance keeps its windows and alerts in memory and leaves the tables
-- empty; the PostgreSQL migration adds the admission function and the
-- people change triggers.
CREATE TABLE key_rate_tokens (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    key_id     TEXT NOT NULL,
    tokens     INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX key_rate_tokens_key ON key_rate_tokens (key_id, expires_at);
CREATE TABLE budget_alerts (
    key_id       TEXT NOT NULL,
    period_start INTEGER NOT NULL,
    budget       TEXT NOT NULL,
    percent      INTEGER NOT NULL,
    raised_at    INTEGER NOT NULL,
    PRIMARY KEY (key_id, period_start, budget, percent)
);
