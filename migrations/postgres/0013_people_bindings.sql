-- 0013: people bindings (issue 39). A stored management token answers to the
-- person who minted it (creator_user_id: its role is at most theirs, and it
-- goes with them; '' for the instance's own token and the tokens it minted);
-- a single sign-on identity is the (issuer, subject) pair, not an email.
ALTER TABLE management_tokens ADD COLUMN creator_user_id TEXT NOT NULL DEFAULT '';
ALTER TABLE users ADD COLUMN sso_issuer TEXT NOT NULL DEFAULT '';
UPDATE management_tokens SET creator_user_id = COALESCE(
    (SELECT u.id FROM users u WHERE u.email = management_tokens.created_by), '');
-- A token whose person is already gone is revoked with them.
DELETE FROM management_tokens
 WHERE creator_user_id = '' AND created_by LIKE '%@%' AND created_by NOT LIKE 'token:%';
