-- 0009: connection limits shared by a team server's instances (issue 34).
-- A connection's maxConcurrent is held as numbered slots (0 … max−1), each a
-- short lease of one instance (holder) renewed while its request runs and
-- fenced by a counter bumped at every acquisition, so a release or renewal
-- from a holder whose slot lapsed and was taken again changes nothing. Its
-- requestsPerMinute / minTimeMs pacing is the next dispatch turn (unix ms).
-- SQLite's single instance keeps both in memory and leaves the tables empty.
CREATE TABLE connection_slots (
    connection_id TEXT NOT NULL,
    slot          INTEGER NOT NULL,
    holder        TEXT NOT NULL,
    fence         INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    PRIMARY KEY (connection_id, slot)
);
CREATE INDEX connection_slots_holder ON connection_slots (holder);
CREATE TABLE connection_pacing (
    connection_id TEXT PRIMARY KEY,
    next_at       INTEGER NOT NULL
);
