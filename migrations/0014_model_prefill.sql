-- 0014: what the gateway learned of each (connection, model)'s assistant
-- prefill (issue 40): whether a trailing assistant message is continued
-- (honoured) or refused / ignored (refused), and how it was found out:
-- "learned" from a continuation, "probe" from the connection Test. Kept
-- across restarts so a target that refused is never asked again; the
-- connection's own providerSpecificData.assistantPrefill overrides it.
CREATE TABLE model_prefill (
    connection_id TEXT NOT NULL,
    model         TEXT NOT NULL,
    state         TEXT NOT NULL,
    source        TEXT NOT NULL,
    learned_at    BIGINT NOT NULL,
    PRIMARY KEY (connection_id, model)
);
