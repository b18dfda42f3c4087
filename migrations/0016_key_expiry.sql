-- 0016: client key expiry and rotation (issue 42 item 10). expires_at (unix
-- ms, 0: never) is when the key stops working; a rotation moves the old
-- secret's hash to prev_key_hash, valid until prev_valid_until (unix ms, the
-- grace period's end; 0 or past: refused as rotated), and stamps rotated_at.
ALTER TABLE api_keys ADD COLUMN expires_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN prev_key_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN prev_valid_until INTEGER NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN rotated_at INTEGER NOT NULL DEFAULT 0;
