-- 0012: bodies on demand (issue 35). Captured request and response bodies,
-- redacted and capped, kept for the retention the user sets; keys marked
-- private are never captured.
ALTER TABLE api_keys ADD COLUMN private INTEGER NOT NULL DEFAULT 0;
CREATE TABLE request_bodies (
    request_id        TEXT PRIMARY KEY,
    created_at        INTEGER NOT NULL,
    api_key_id        TEXT NOT NULL DEFAULT '',
    model             TEXT NOT NULL DEFAULT '',
    client_format     TEXT NOT NULL DEFAULT '',
    upstream_format   TEXT NOT NULL DEFAULT '',
    stream            INTEGER NOT NULL DEFAULT 0,
    client_request    TEXT NOT NULL DEFAULT '',
    upstream_request  TEXT NOT NULL DEFAULT '',
    upstream_response TEXT NOT NULL DEFAULT '',
    client_response   TEXT NOT NULL DEFAULT '',
    bytes             INTEGER NOT NULL DEFAULT 0,
    truncated         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_request_bodies_created ON request_bodies(created_at);
