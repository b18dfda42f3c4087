-- 0017: a team server spreads new sessions over a provider's OAuth accounts
-- team-wide (issue 44). The live pins per connection are counted at each new
-- session's claim: this index serves the count.
CREATE INDEX idx_session_affinity_connection ON session_account_affinity (connection_id, expires_at);
-- omniroute_claim_spread_pin claims the pin of a new session p_key that may
-- take any of the accounts p_conns (their providers p_providers, in the
-- claiming instance's order): when the session has a live pin at p_now, that
-- pin holds; otherwise it is pinned until p_expires to the account holding
-- the fewest live pins (the first in p_conns among equals). The pool's
-- transaction lock (p_pool, the accounts' provider) orders the claims of
-- every instance, and each of the function's statements reads what the
-- claims before it wrote (a volatile function's fresh snapshot), so a burst
-- of new sessions on several instances counts every one of them. A pin
-- written meanwhile by a claim outside the pool (one naming a single
-- connection, store.ClaimPin) is never overwritten while live: the insert's
-- condition is ClaimPin's. It returns the pin that holds.
-- Its plans are generic (planned once per connection, not at every call:
-- the count's custom plan cost more to make than to run).
-- (Its statements end their lines without ';': the migration runner splits
-- statements at line-ending semicolons.)
CREATE FUNCTION omniroute_claim_spread_pin(p_key TEXT, p_pool TEXT, p_conns TEXT[], p_providers TEXT[],
    p_expires BIGINT, p_updated BIGINT, p_now BIGINT)
RETURNS TABLE (won_connection TEXT, won_provider TEXT, won_expires BIGINT) LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan AS $$
DECLARE c TEXT; pv TEXT
; BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('omniroute_spread|' || p_pool, 0))
    ; RETURN QUERY SELECT a.connection_id, a.provider, a.expires_at FROM session_account_affinity a
        WHERE a.session_key = p_key AND a.expires_at > p_now
    ; IF FOUND THEN
        RETURN
    ; END IF
    ; SELECT x.conn, x.prov INTO c, pv FROM unnest(p_conns, p_providers) WITH ORDINALITY AS x(conn, prov, ord)
        ORDER BY (SELECT COUNT(*) FROM session_account_affinity a WHERE a.connection_id = x.conn AND a.expires_at > p_now), x.ord
        LIMIT 1
    ; RETURN QUERY INSERT INTO session_account_affinity AS a (session_key, connection_id, provider, expires_at, updated_at)
        VALUES (p_key, c, pv, p_expires, p_updated)
        ON CONFLICT (session_key) DO UPDATE SET connection_id = excluded.connection_id, provider = excluded.provider,
            expires_at = excluded.expires_at, updated_at = excluded.updated_at
        WHERE a.expires_at <= p_now OR a.connection_id = excluded.connection_id
        RETURNING a.connection_id, a.provider, a.expires_at
    ; IF FOUND THEN
        RETURN
    ; END IF
    ; RETURN QUERY SELECT a.connection_id, a.provider, a.expires_at FROM session_account_affinity a WHERE a.session_key = p_key
; END $$;
