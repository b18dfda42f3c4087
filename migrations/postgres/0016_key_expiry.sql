-- 0016: client key expiry and rotation (issue 42 item 10). expires_at (unix
-- ms, 0: never) is when the key stops working; a rotation moves the old
-- secret's hash to prev_key_hash, valid until prev_valid_until (unix ms, the
-- grace period's end; 0 or past: refused as rotated), and stamps rotated_at.
ALTER TABLE api_keys ADD COLUMN expires_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN prev_key_hash TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN prev_valid_until BIGINT NOT NULL DEFAULT 0;
ALTER TABLE api_keys ADD COLUMN rotated_at BIGINT NOT NULL DEFAULT 0;
-- Every instance reloads its keyring when a key's expiry or previous secret
-- changes, as it does for the columns of 0004.
DROP TRIGGER trg_api_keys_changes ON api_keys;
CREATE TRIGGER trg_api_keys_changes AFTER INSERT OR DELETE OR UPDATE OF name, key_hash, scopes, allowed_connections, allowed_models, is_default, expires_at, prev_key_hash, prev_valid_until
    ON api_keys FOR EACH STATEMENT EXECUTE FUNCTION omniroute_notify_change();
