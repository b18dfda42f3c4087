-- 0019: omniroute_acquire_slot_pair takes one slot of each of two limits
-- held in connection_slots (a connection's maxConcurrent, p_max_a slots of
-- p_a, and a model's cap on it, p_max_b of p_b) for p_holder until
-- p_now + p_ttl, both or neither, in one statement instead of two: each
-- slot is taken as store.AcquireSlot takes one (a slot counts as free when
-- never taken, released, lapsed, or expiring more than p_lapse ahead; the
-- fence is bumped). When the second is full, the first is given back in the
-- same transaction (expires_at 0: free, its fence already bumped), so no
-- other statement ever sees it taken. The two rows are locked in the
-- names' order, the order in which store.RenewSlots locks a holder's rows,
-- so neither waits for the other in a cycle. It returns one row: both
-- slots and fences, and full ('' when both were taken, else the name whose
-- slots were all held — the first in that order).
-- (Its statements end their lines without ';': the migration runner splits
-- statements at line-ending semicolons.)
CREATE FUNCTION omniroute_acquire_slot_pair(p_a TEXT, p_max_a INTEGER, p_b TEXT, p_max_b INTEGER, p_holder TEXT,
    p_now BIGINT, p_ttl BIGINT, p_lapse BIGINT)
RETURNS TABLE (a_slot INTEGER, a_fence BIGINT, b_slot INTEGER, b_fence BIGINT, full_name TEXT) LANGUAGE plpgsql AS $$
DECLARE nm TEXT[]; mx INTEGER[]; s INTEGER; f BIGINT; ss INTEGER[] := '{}'; fs BIGINT[] := '{}'; i INTEGER
; BEGIN
    IF p_b < p_a THEN
        nm := ARRAY[p_b, p_a]
        ; mx := ARRAY[p_max_b, p_max_a]
    ; ELSE
        nm := ARRAY[p_a, p_b]
        ; mx := ARRAY[p_max_a, p_max_b]
    ; END IF
    ; FOR i IN 1..2 LOOP
        WITH RECURSIVE n(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM n WHERE k + 1 < mx[i]),
            free AS (SELECT n.k FROM n WHERE NOT EXISTS (
                SELECT 1 FROM connection_slots c WHERE c.connection_id = nm[i] AND c.slot = n.k
                    AND c.expires_at > p_now AND c.expires_at <= p_now + p_lapse)
                ORDER BY n.k LIMIT 1)
        INSERT INTO connection_slots AS c (connection_id, slot, holder, fence, expires_at)
        SELECT nm[i], free.k, p_holder, 1, p_now + p_ttl FROM free WHERE true
        ON CONFLICT (connection_id, slot) DO UPDATE SET holder = excluded.holder,
            fence = c.fence + 1, expires_at = excluded.expires_at
        WHERE c.expires_at <= p_now OR c.expires_at > p_now + p_lapse
        RETURNING c.slot, c.fence INTO s, f
        ; IF NOT FOUND THEN
            IF i = 2 THEN
                UPDATE connection_slots SET expires_at = 0
                    WHERE connection_id = nm[1] AND slot = ss[1] AND fence = fs[1] AND holder = p_holder
            ; END IF
            ; RETURN QUERY SELECT 0, 0::BIGINT, 0, 0::BIGINT, nm[i]
            ; RETURN
        ; END IF
        ; ss := ss || s
        ; fs := fs || f
    ; END LOOP
    ; IF p_b < p_a THEN
        RETURN QUERY SELECT ss[2], fs[2], ss[1], fs[1], ''::TEXT
    ; ELSE
        RETURN QUERY SELECT ss[1], fs[1], ss[2], fs[2], ''::TEXT
    ; END IF
; END $$;
