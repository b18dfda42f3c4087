package store

import (
	"errors"
	"strings"

	"gorm.io/gorm"
)

// User is a person who signs in to the dashboard and management API: a local
// account (PasswordHash set) or one bound to a single sign-on identity
// (SSOIssuer, SSOSubject).
type User struct {
	ID           string `gorm:"column:id;primaryKey"`
	Email        string `gorm:"column:email"`
	Name         string `gorm:"column:name"`
	Role         string `gorm:"column:role"`
	PasswordHash string `gorm:"column:password_hash"`
	SSOSubject   string `gorm:"column:sso_subject"`
	SSOIssuer    string `gorm:"column:sso_issuer"`
	CreatedAt    int64  `gorm:"column:created_at"`
	LastLoginAt  int64  `gorm:"column:last_login_at"`
}

// TableName names the table.
func (User) TableName() string { return "users" }

// UserSession is a signed-in browser: the SHA-256 of its cookie's value.
type UserSession struct {
	IDHash    string `gorm:"column:id_hash;primaryKey"`
	UserID    string `gorm:"column:user_id"`
	CreatedAt int64  `gorm:"column:created_at"`
	ExpiresAt int64  `gorm:"column:expires_at"`
}

// TableName names the table.
func (UserSession) TableName() string { return "user_sessions" }

// ManagementToken is a management API bearer token with a role, stored as
// its SHA-256 so every instance sharing the database accepts it.
type ManagementToken struct {
	ID          string `gorm:"column:id;primaryKey"`
	Name        string `gorm:"column:name"`
	TokenHash   string `gorm:"column:token_hash"`
	TokenPrefix string `gorm:"column:token_prefix"`
	Role        string `gorm:"column:role"`
	CreatedBy   string `gorm:"column:created_by"`
	// CreatorUserID is the person the token answers to: its role is at most
	// theirs, and deleting them revokes it ("" for the instance's own token
	// and the tokens minted with it).
	CreatorUserID string `gorm:"column:creator_user_id"`
	CreatedAt     int64  `gorm:"column:created_at"`
	LastUsedAt    int64  `gorm:"column:last_used_at"`
}

// TableName names the table.
func (ManagementToken) TableName() string { return "management_tokens" }

// AuditEntry is one management write: who, when, from where, what.
type AuditEntry struct {
	ID        int64  `gorm:"column:id;primaryKey;autoIncrement"`
	At        int64  `gorm:"column:at"`
	Actor     string `gorm:"column:actor"`
	ActorKind string `gorm:"column:actor_kind"`
	Role      string `gorm:"column:role"`
	Remote    string `gorm:"column:remote"`
	Action    string `gorm:"column:action"`
	Target    string `gorm:"column:target"`
	Status    int    `gorm:"column:status"`
	Detail    string `gorm:"column:detail"`
}

// TableName names the table.
func (AuditEntry) TableName() string { return "audit_log" }

// Users returns every user, oldest first.
func (s *Store) Users() ([]User, error) {
	var out []User
	err := s.db.Order("created_at ASC, id ASC").Find(&out).Error
	return out, err
}

// UserCount counts the users.
func (s *Store) UserCount() (int64, error) {
	var n int64
	err := s.db.Model(&User{}).Count(&n).Error
	return n, err
}

// User returns one user by id.
func (s *Store) User(id string) (User, error) {
	return s.userWhere("id = ?", id)
}

// UserByEmail returns the user with this email (compared lower-cased).
func (s *Store) UserByEmail(email string) (User, error) {
	return s.userWhere("email = ?", strings.ToLower(email))
}

// UserBySSO returns the user bound to a single sign-on identity.
func (s *Store) UserBySSO(issuer, subject string) (User, error) {
	if subject == "" {
		return User{}, ErrNotFound
	}
	return s.userWhere("sso_issuer = ? AND sso_subject = ?", issuer, subject)
}

func (s *Store) userWhere(q string, args ...any) (User, error) {
	var u User
	err := s.db.Where(q, args...).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return u, ErrNotFound
	}
	return u, err
}

// CreateUser inserts a user; ErrConflict when the email is taken.
func (s *Store) CreateUser(u *User) error {
	u.Email = strings.ToLower(u.Email)
	err := s.db.Create(u).Error
	if isUniqueViolation(err) {
		return ErrConflict
	}
	return err
}

// SaveUser writes a user's editable columns (name, role, password hash,
// SSO subject, last sign-in).
func (s *Store) SaveUser(u *User) error {
	res := s.db.Model(&User{}).Where("id = ?", u.ID).Updates(map[string]any{
		"name": u.Name, "role": u.Role, "password_hash": u.PasswordHash, "sso_subject": u.SSOSubject,
		"sso_issuer": u.SSOIssuer, "last_login_at": u.LastLoginAt,
	})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// DeleteUser removes a user, their sessions, the management tokens they
// minted, and their ownership of keys.
func (s *Store) DeleteUser(id string) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("user_id = ?", id).Delete(&UserSession{}).Error; err != nil {
			return err
		}
		if err := tx.Where("creator_user_id = ?", id).Delete(&ManagementToken{}).Error; err != nil {
			return err
		}
		if err := tx.Model(&APIKey{}).Where("owner_user_id = ?", id).Update("owner_user_id", "").Error; err != nil {
			return err
		}
		res := tx.Where("id = ?", id).Delete(&User{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// CreateSession stores a session.
func (s *Store) CreateSession(ss *UserSession) error { return s.db.Create(ss).Error }

// SessionUser returns the user of the unexpired session whose cookie hashes
// to idHash (ErrNotFound for none).
func (s *Store) SessionUser(idHash string, nowMs int64) (User, error) {
	u, _, err := s.SessionUserUntil(idHash, nowMs)
	return u, err
}

// SessionUserUntil is SessionUser with the session's expiry (unix ms), for
// a cache that must stop honouring it then.
func (s *Store) SessionUserUntil(idHash string, nowMs int64) (User, int64, error) {
	var ss UserSession
	err := s.db.Where("id_hash = ? AND expires_at > ?", idHash, nowMs).Take(&ss).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return User{}, 0, ErrNotFound
	}
	if err != nil {
		return User{}, 0, err
	}
	u, err := s.User(ss.UserID)
	return u, ss.ExpiresAt, err
}

// DeleteSession removes one session (sign-out).
func (s *Store) DeleteSession(idHash string) error {
	return s.db.Where("id_hash = ?", idHash).Delete(&UserSession{}).Error
}

// DeleteUserSessions signs a user out everywhere (password change).
func (s *Store) DeleteUserSessions(userID string) error {
	return s.db.Where("user_id = ?", userID).Delete(&UserSession{}).Error
}

// DeleteExpiredSessions removes sessions expired at nowMs.
func (s *Store) DeleteExpiredSessions(nowMs int64) error {
	return s.db.Where("expires_at <= ?", nowMs).Delete(&UserSession{}).Error
}

// ManagementTokens returns every stored management token, oldest first.
func (s *Store) ManagementTokens() ([]ManagementToken, error) {
	var out []ManagementToken
	err := s.db.Order("created_at ASC, id ASC").Find(&out).Error
	return out, err
}

// ManagementTokenByHash returns the token whose value hashes to hash.
func (s *Store) ManagementTokenByHash(hash string) (ManagementToken, error) {
	var t ManagementToken
	err := s.db.Where("token_hash = ?", hash).Take(&t).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return t, ErrNotFound
	}
	return t, err
}

// CreateManagementToken inserts a token; ErrConflict for a duplicate id or hash.
func (s *Store) CreateManagementToken(t *ManagementToken) error {
	err := s.db.Create(t).Error
	if isUniqueViolation(err) {
		return ErrConflict
	}
	return err
}

// UpsertManagementToken inserts t or, when its id exists, rewrites its hash,
// prefix, name and role (an instance publishing its own token at start).
func (s *Store) UpsertManagementToken(t *ManagementToken) error {
	return s.db.Transaction(func(tx *gorm.DB) error {
		// One row per token: an instance restarted under another name (a new
		// port) publishes the same token again, replacing its old row.
		if err := tx.Where("token_hash = ? AND id <> ?", t.TokenHash, t.ID).Delete(&ManagementToken{}).Error; err != nil {
			return err
		}
		res := tx.Model(&ManagementToken{}).Where("id = ?", t.ID).Updates(map[string]any{
			"name": t.Name, "token_hash": t.TokenHash, "token_prefix": t.TokenPrefix, "role": t.Role})
		if res.Error != nil || res.RowsAffected > 0 {
			return res.Error
		}
		return tx.Create(t).Error
	})
}

// TouchManagementToken records a token's use.
func (s *Store) TouchManagementToken(id string, nowMs int64) error {
	return s.db.Model(&ManagementToken{}).Where("id = ?", id).Update("last_used_at", nowMs).Error
}

// DeleteManagementToken revokes a token.
func (s *Store) DeleteManagementToken(id string) error {
	res := s.db.Where("id = ?", id).Delete(&ManagementToken{})
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return ErrNotFound
	}
	return nil
}

// AddAudit appends one audit entry.
func (s *Store) AddAudit(e *AuditEntry) error { return s.db.Create(e).Error }

// AuditFilter selects audit entries: Actor and Action match as
// case-insensitive substrings, Since and Until (unix ms, 0: open) bound At,
// Before (an id, 0: newest) pages back, Limit caps the page.
type AuditFilter struct {
	Actor, Action string
	Since, Until  int64
	Before        int64
	Limit         int
}

// Audit returns a page of entries, newest first.
func (s *Store) Audit(f AuditFilter) ([]AuditEntry, error) {
	q := s.db.Model(&AuditEntry{})
	if f.Actor != "" {
		q = q.Where(`LOWER(actor) LIKE ? ESCAPE '\'`, "%"+likeEscape(strings.ToLower(f.Actor))+"%")
	}
	if f.Action != "" {
		q = q.Where(`LOWER(action) LIKE ? ESCAPE '\'`, "%"+likeEscape(strings.ToLower(f.Action))+"%")
	}
	if f.Since > 0 {
		q = q.Where("at >= ?", f.Since)
	}
	if f.Until > 0 {
		q = q.Where("at < ?", f.Until)
	}
	if f.Before > 0 {
		q = q.Where("id < ?", f.Before)
	}
	var out []AuditEntry
	err := q.Order("id DESC").Limit(f.Limit).Find(&out).Error
	return out, err
}

// likeEscape makes LIKE's wildcards in a user's filter text literal.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(s)
}
