-- 0001: first schema. Times are INTEGER unix milliseconds (0 = unset) so that
-- comparisons against "now" are exact and identical in SQLite and PostgreSQL.

CREATE TABLE provider_connections (
    id                      TEXT PRIMARY KEY,
    provider                TEXT NOT NULL,
    name                    TEXT NOT NULL,
    auth_type               TEXT NOT NULL DEFAULT 'apikey',
    base_url                TEXT NOT NULL DEFAULT '',
    prefix                  TEXT NOT NULL DEFAULT '',
    priority                INTEGER NOT NULL DEFAULT 100,
    is_active               INTEGER NOT NULL DEFAULT 1,
    max_concurrent          INTEGER,
    rate_limit_protection   INTEGER,
    api_key_enc             TEXT NOT NULL DEFAULT '',
    access_token_enc        TEXT NOT NULL DEFAULT '',
    refresh_token_enc       TEXT NOT NULL DEFAULT '',
    expires_at              INTEGER NOT NULL DEFAULT 0,
    models                  TEXT NOT NULL DEFAULT '[]',
    provider_specific_data  TEXT NOT NULL DEFAULT '{}',
    rate_limit_overrides    TEXT NOT NULL DEFAULT '{}',
    rate_limited_until      INTEGER NOT NULL DEFAULT 0,
    test_status             TEXT NOT NULL DEFAULT 'active',
    last_error              TEXT NOT NULL DEFAULT '',
    last_error_type         TEXT NOT NULL DEFAULT '',
    last_error_at           INTEGER NOT NULL DEFAULT 0,
    error_code              TEXT NOT NULL DEFAULT '',
    backoff_level           INTEGER NOT NULL DEFAULT 0,
    reject_streak           INTEGER NOT NULL DEFAULT 0,
    expired_retries         INTEGER NOT NULL DEFAULT 0,
    created_at              INTEGER NOT NULL,
    updated_at              INTEGER NOT NULL
);
CREATE INDEX idx_provider_connections_provider ON provider_connections(provider, priority);

CREATE TABLE api_keys (
    id                   TEXT PRIMARY KEY,
    name                 TEXT NOT NULL,
    key_hash             TEXT NOT NULL UNIQUE,
    key_enc              TEXT NOT NULL DEFAULT '',
    key_prefix           TEXT NOT NULL DEFAULT '',
    scopes               TEXT NOT NULL DEFAULT '[]',
    allowed_connections  TEXT NOT NULL DEFAULT '[]',
    allowed_models       TEXT NOT NULL DEFAULT '[]',
    is_default           INTEGER NOT NULL DEFAULT 0,
    created_at           INTEGER NOT NULL,
    last_used_at         INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE combos (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    strategy    TEXT NOT NULL DEFAULT 'priority',
    targets     TEXT NOT NULL DEFAULT '[]',
    config      TEXT NOT NULL DEFAULT '{}',
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE key_value (
    namespace   TEXT NOT NULL,
    key         TEXT NOT NULL,
    value       TEXT NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (namespace, key)
);

CREATE TABLE domain_circuit_breakers (
    provider               TEXT PRIMARY KEY,
    state                  TEXT NOT NULL,
    failures               INTEGER NOT NULL DEFAULT 0,
    consecutive_successes  INTEGER NOT NULL DEFAULT 0,
    open_cycles            INTEGER NOT NULL DEFAULT 0,
    last_failure_at        INTEGER NOT NULL DEFAULT 0,
    opened_at              INTEGER NOT NULL DEFAULT 0,
    state_changed_at       INTEGER NOT NULL DEFAULT 0,
    updated_at             INTEGER NOT NULL
);

CREATE TABLE session_account_affinity (
    session_key    TEXT PRIMARY KEY,
    connection_id  TEXT NOT NULL,
    provider       TEXT NOT NULL,
    expires_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);
CREATE INDEX idx_session_affinity_expires ON session_account_affinity(expires_at);

CREATE TABLE exclusive_connection_leases (
    id              TEXT PRIMARY KEY,
    owner_hash      TEXT NOT NULL,
    api_key_id      TEXT NOT NULL,
    connection_id   TEXT NOT NULL,
    generation      INTEGER NOT NULL,
    state           TEXT NOT NULL,
    model           TEXT NOT NULL DEFAULT '',
    acquired_at     INTEGER NOT NULL,
    renewed_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    released_at     INTEGER NOT NULL DEFAULT 0,
    release_reason  TEXT NOT NULL DEFAULT ''
);
-- One active lease per owner and per connection, enforced by the database so
-- that two gateway processes sharing it can never hold the same connection.
CREATE UNIQUE INDEX uq_leases_active_owner ON exclusive_connection_leases(owner_hash) WHERE state = 'ACTIVE';
CREATE UNIQUE INDEX uq_leases_active_connection ON exclusive_connection_leases(connection_id) WHERE state = 'ACTIVE';

CREATE TABLE request_logs (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    request_id         TEXT NOT NULL,
    created_at         INTEGER NOT NULL,
    api_key_id         TEXT NOT NULL DEFAULT '',
    client_format      TEXT NOT NULL DEFAULT '',
    model              TEXT NOT NULL DEFAULT '',
    provider           TEXT NOT NULL DEFAULT '',
    connection_id      TEXT NOT NULL DEFAULT '',
    status             INTEGER NOT NULL DEFAULT 0,
    stream             INTEGER NOT NULL DEFAULT 0,
    attempt_count      INTEGER NOT NULL DEFAULT 0,
    attempts           TEXT NOT NULL DEFAULT '[]',
    latency_ms         INTEGER NOT NULL DEFAULT 0,
    error_code         TEXT NOT NULL DEFAULT '',
    prompt_tokens      INTEGER NOT NULL DEFAULT 0,
    completion_tokens  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX idx_request_logs_created ON request_logs(created_at);
