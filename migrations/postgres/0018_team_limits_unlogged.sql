-- 0018: the team-wide limits' tables hold leases and minute windows that
-- live seconds to a minute: they are UNLOGGED (issue 44's 0.4 ms budget).
-- A statement that writes only unlogged tables writes no WAL, so its commit
-- does not wait for the WAL's flush to disk — which was most of what a
-- limited request's statement cost (0.36–0.48 ms logged, 0.13–0.16 ms
-- unlogged on the 2-core test machine, docs/BENCHMARKS.md). What it gives
-- up: after a crash of the PostgreSQL server (not a clean stop) the tables
-- start empty, and a standby promoted to primary has them empty. The
-- instances then admit as if no slot were held and no window counted —
-- for at most one lease (a connection's or model's slots) or one minute (a
-- key's windows, a pacing turn one interval) — which is less than what the
-- outage itself already allowed: while the database does not answer, every
-- instance applies the limits alone (fail open).
ALTER TABLE connection_slots SET UNLOGGED;
ALTER TABLE connection_pacing SET UNLOGGED;
ALTER TABLE key_rate_tokens SET UNLOGGED;
-- omniroute_take_key_rates is omniroute_take_tokens for a key with both
-- limits in one call: its tokens-per-minute window (p_key, limit p_tpm, the
-- request holding p_tokens) and its requests-per-minute window ('rpm|' ||
-- p_key, limit p_rpm, the request counting 1), each under its own
-- transaction lock (taken in this order; the one-window calls take one), so
-- a request of such a key costs one statement, not two. The request is
-- admitted in both or neither: it returns both holds' ids (0, 0: refused —
-- the TPM window first), each window's count before it and when its oldest
-- row leaves it.
-- (Its statements end their lines without ';': the migration runner splits
-- statements at line-ending semicolons.)
CREATE FUNCTION omniroute_take_key_rates(p_key TEXT, p_rpm BIGINT, p_tpm BIGINT, p_tokens BIGINT, p_now BIGINT, p_ttl BIGINT)
RETURNS TABLE (tpm_hold BIGINT, tpm_used BIGINT, tpm_oldest BIGINT, rpm_hold BIGINT, rpm_used BIGINT, rpm_oldest BIGINT)
LANGUAGE plpgsql AS $$
DECLARE rk TEXT := 'rpm|' || p_key; tu BIGINT; t_o BIGINT; ru BIGINT; r_o BIGINT; th BIGINT; rh BIGINT
; BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('omniroute_tpm|' || p_key, 0))
    ; PERFORM pg_advisory_xact_lock(hashtextextended('omniroute_tpm|' || rk, 0))
    ; DELETE FROM key_rate_tokens WHERE key_id IN (p_key, rk) AND expires_at <= p_now
    ; SELECT COALESCE(SUM(tokens), 0), COALESCE(MIN(expires_at), p_now) INTO tu, t_o
      FROM key_rate_tokens WHERE key_id = p_key AND expires_at > p_now
    ; SELECT COALESCE(SUM(tokens), 0), COALESCE(MIN(expires_at), p_now) INTO ru, r_o
      FROM key_rate_tokens WHERE key_id = rk AND expires_at > p_now
    ; IF tu >= p_tpm OR ru >= p_rpm THEN
        RETURN QUERY SELECT 0::BIGINT, tu, t_o, 0::BIGINT, ru, r_o
        ; RETURN
    ; END IF
    ; INSERT INTO key_rate_tokens (key_id, tokens, expires_at) VALUES (p_key, GREATEST(p_tokens, 1), p_now + p_ttl)
        RETURNING id INTO th
    ; INSERT INTO key_rate_tokens (key_id, tokens, expires_at) VALUES (rk, 1, p_now + p_ttl)
        RETURNING id INTO rh
    ; RETURN QUERY SELECT th, tu, t_o, rh, ru, r_o
; END $$;
