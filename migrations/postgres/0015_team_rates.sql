-- 0014: a team server's round two (issue 44).
-- A client key's tokens-per-minute window held across the instances: one row
-- per admitted request (its estimated tokens while in flight, then what its
-- answer used), counted while expires_at (unix ms) is ahead. A key's
-- requests-per-minute window and a model's concurrency cap use the
-- connection_slots of 0009 under their own names.
CREATE TABLE key_rate_tokens (
    id         BIGSERIAL PRIMARY KEY,
    key_id     TEXT NOT NULL,
    tokens     BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX key_rate_tokens_key ON key_rate_tokens (key_id, expires_at);
-- omniroute_take_tokens admits a request of p_key under its limit p_tpm when
-- the window's tokens (held and charged, every instance's) are below it, and
-- holds p_tokens (at least 1) until p_now + p_ttl. The key's transaction
-- lock orders the instances' admissions: each counts the ones before it.
-- It returns the hold's id (0: refused), the tokens counted before it, and
-- when the oldest of them leaves the window.
-- (Its statements end their lines without ';': the migration runner splits
-- statements at line-ending semicolons.)
CREATE FUNCTION omniroute_take_tokens(p_key TEXT, p_tpm BIGINT, p_tokens BIGINT, p_now BIGINT, p_ttl BIGINT)
RETURNS TABLE (hold_id BIGINT, used BIGINT, oldest BIGINT) LANGUAGE plpgsql AS $$
DECLARE u BIGINT; o BIGINT; nid BIGINT
; BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('omniroute_tpm|' || p_key, 0))
    ; DELETE FROM key_rate_tokens WHERE key_id = p_key AND expires_at <= p_now
    ; SELECT COALESCE(SUM(tokens), 0), COALESCE(MIN(expires_at), p_now) INTO u, o
      FROM key_rate_tokens WHERE key_id = p_key AND expires_at > p_now
    ; IF u >= p_tpm THEN
        RETURN QUERY SELECT 0::BIGINT, u, o
        ; RETURN
    ; END IF
    ; INSERT INTO key_rate_tokens (key_id, tokens, expires_at) VALUES (p_key, GREATEST(p_tokens, 1), p_now + p_ttl)
        RETURNING id INTO nid
    ; RETURN QUERY SELECT nid, u, o
; END $$;
-- A budget alert (80 % / 100 %) is claimed once per key, period, budget and
-- level for the whole team: the instance whose insert lands raises it.
CREATE TABLE budget_alerts (
    key_id       TEXT NOT NULL,
    period_start BIGINT NOT NULL,
    budget       TEXT NOT NULL,
    percent      INTEGER NOT NULL,
    raised_at    BIGINT NOT NULL,
    PRIMARY KEY (key_id, period_start, budget, percent)
);
-- People (users, sessions, management tokens) are cached by each instance:
-- a change that alters who may do what wakes every instance (topic
-- "people"): a user's email, role or password, a deletion, a session's end.
-- Sign-ins (new sessions), single sign-on bindings (they decide sign-ins,
-- not the cached checks), last-use and last-login stamps do not.
CREATE TRIGGER trg_users_changes AFTER DELETE OR UPDATE OF email, role, password_hash
    ON users FOR EACH STATEMENT EXECUTE FUNCTION omniroute_notify_change('people');
CREATE TRIGGER trg_user_sessions_changes AFTER DELETE OR UPDATE OF user_id, expires_at
    ON user_sessions FOR EACH STATEMENT EXECUTE FUNCTION omniroute_notify_change('people');
CREATE TRIGGER trg_management_tokens_changes AFTER DELETE OR UPDATE OF token_hash, role
    ON management_tokens FOR EACH STATEMENT EXECUTE FUNCTION omniroute_notify_change('people');
