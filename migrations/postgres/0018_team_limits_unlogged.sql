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
