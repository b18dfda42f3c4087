-- 0010: people (issue 34). Local and SSO users with a role; their sessions
-- (the cookie's SHA-256, so every instance accepts it); management tokens
-- stored hashed (shared by every instance of a team server), each with a role;
-- the audit log of management writes; a client key's owner.
CREATE TABLE users (
    id            TEXT PRIMARY KEY,
    email         TEXT NOT NULL UNIQUE,
    name          TEXT NOT NULL DEFAULT '',
    role          TEXT NOT NULL,
    password_hash TEXT NOT NULL DEFAULT '',
    sso_subject   TEXT NOT NULL DEFAULT '',
    created_at    BIGINT NOT NULL,
    last_login_at BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE user_sessions (
    id_hash    TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX user_sessions_user ON user_sessions(user_id);
CREATE TABLE management_tokens (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    token_hash   TEXT NOT NULL UNIQUE,
    token_prefix TEXT NOT NULL,
    role         TEXT NOT NULL,
    created_by   TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE audit_log (
    id         BIGSERIAL PRIMARY KEY,
    at         BIGINT NOT NULL,
    actor      TEXT NOT NULL,
    actor_kind TEXT NOT NULL,
    role       TEXT NOT NULL,
    remote     TEXT NOT NULL,
    action     TEXT NOT NULL,
    target     TEXT NOT NULL,
    status     INTEGER NOT NULL,
    detail     TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_at ON audit_log(at);
ALTER TABLE api_keys ADD COLUMN owner_user_id TEXT NOT NULL DEFAULT '';
