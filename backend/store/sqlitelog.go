package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// The request log is the one table written on every request, so on SQLite its
// batches bypass database/sql and the driver: the glebarez driver parses and
// compiles a statement's SQL again on every Exec, prepared or not (its
// (*stmt).exec calls sqlite3_prepare_v2 each time), and binds each parameter
// by a linear search of the arguments. That was half the CPU a logged request
// cost (docs/BENCHMARKS.md, issue 19). logWriter instead keeps its
// statements compiled on the connection and binds by index, through the same
// SQLite library the driver runs on (modernc.org/sqlite/lib), on the same
// single connection, inside database/sql's Conn.Raw so that nothing else uses
// the connection meanwhile. What is written is exactly what the portable path
// (insertRequestLogsPortable) writes; a test holds the two equal.

// rawSQLite is the C-level handle of one SQLite connection.
type rawSQLite struct {
	db  uintptr // sqlite3*
	tls *libc.TLS
}

// errNoRawSQLite says the driver connection is not the glebarez one this file
// knows (another driver, or a version whose layout changed): callers then use
// the portable path.
var errNoRawSQLite = errors.New("store: no raw SQLite handle")

// glebarezConnType is the driver connection's type, checked field by field
// before its handle is read.
const glebarezConnType = "github.com/glebarez/go-sqlite.conn"

// rawSQLiteOf returns the handle of a glebarez driver connection (the value
// database/sql's Conn.Raw passes). The driver does not export it, so its two
// fields are read by name after checking their names and types; any mismatch
// reports ok=false rather than guessing.
func rawSQLiteOf(driverConn any) (rawSQLite, bool) {
	v := reflect.ValueOf(driverConn)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return rawSQLite{}, false
	}
	e := v.Elem()
	if t := e.Type(); t.PkgPath()+"."+t.Name() != glebarezConnType {
		return rawSQLite{}, false
	}
	db, tls := e.FieldByName("db"), e.FieldByName("tls")
	if !db.IsValid() || db.Kind() != reflect.Uintptr || !tls.IsValid() || tls.Type() != reflect.TypeFor[*libc.TLS]() {
		return rawSQLite{}, false
	}
	r := rawSQLite{db: uintptr(db.Uint()), tls: *(**libc.TLS)(unsafe.Pointer(tls.UnsafeAddr()))}
	if r.db == 0 || r.tls == nil {
		return rawSQLite{}, false
	}
	return r, true
}

// withRawSQLite runs f with the SQLite connection's handle, holding the
// connection (the store's only one) for f's duration. It returns
// errNoRawSQLite, without calling f, when the handle cannot be had.
func (s *Store) withRawSQLite(f func(rawSQLite) error) error {
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	conn, err := sqlDB.Conn(context.Background())
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := rawSQLiteOf(dc)
		if !ok {
			return errNoRawSQLite
		}
		return f(c)
	})
}

// logStmtRows is the rows of the multi-row INSERT (a batch's remainder goes
// one row at a time through the single-row one). With the statement compiled
// once, more rows per statement only save per-step overhead: 8, 16, 32 and 64
// measured alike (≈ 3.1–3.3 cpu-µs per row in batches of 256).
const logStmtRows = 16

// logWriter owns the compiled statements of the request-log batch on one
// SQLite connection. Its methods run inside Conn.Raw, which hands the single
// connection to one caller at a time; mu guards the fields against a Close
// from another goroutine all the same.
type logWriter struct {
	mu   sync.Mutex
	conn rawSQLite // the connection the statements were compiled on (db 0: none yet)
	// Compiled statements (sqlite3_stmt*).
	begin, commit, rollback, insert1, insertN, upsert uintptr
	// text gathers every string value of the batch being bound, before it is
	// copied into C memory for the statements to point into.
	text []byte
}

// sqliteOK, sqliteDone are the result codes a step may end with.
const (
	sqliteOK   = sqlite3.SQLITE_OK
	sqliteDone = sqlite3.SQLITE_DONE
)

// errAt is the connection's last error, with what was being done.
func (c rawSQLite) errAt(what string, rc int32) error {
	return fmt.Errorf("request log: %s: %s (%d)", what, libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db)), rc)
}

// prepare compiles sql once for repeated use. SQL text and out-parameter
// live in the library's C heap: the transpiled code does pointer arithmetic
// that the race detector's checkptr refuses on Go memory.
func (w *logWriter) prepare(c rawSQLite, sql string) (uintptr, error) {
	z, err := libc.CString(sql)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(c.tls, z)
	cell := libc.Xmalloc(c.tls, types.Size_t(ptrSize))
	if cell == 0 {
		return 0, errors.New("request log: out of memory")
	}
	defer libc.Xfree(c.tls, cell)
	out := libc.GoBytes(cell, ptrSize) // a view of the C memory, not a copy
	clear(out)
	rc := sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, z, int32(len(sql)), sqlite3.SQLITE_PREPARE_PERSISTENT, cell, 0)
	if rc != sqliteOK {
		return 0, c.errAt("prepare", rc)
	}
	if ptrSize == 4 {
		return uintptr(binary.NativeEndian.Uint32(out)), nil
	}
	return uintptr(binary.NativeEndian.Uint64(out)), nil
}

// ptrSize is the size of a C pointer.
const ptrSize = int(unsafe.Sizeof(uintptr(0)))

// ready compiles the statements on c (again, when the connection changed).
func (w *logWriter) ready(c rawSQLite) error {
	if w.conn == c {
		return nil
	}
	// database/sql keeps the store's one connection for the store's life (the
	// driver never reports it bad), so this runs once. Were it ever replaced,
	// the old connection is closed already, with its TLS: its statements
	// cannot be finalised any more and are left to close_v2's zombie.
	w.conn = rawSQLite{}
	stmts := []struct {
		dst *uintptr
		sql string
	}{
		{&w.begin, "BEGIN IMMEDIATE"},
		{&w.commit, "COMMIT"},
		{&w.rollback, "ROLLBACK"},
		{&w.insert1, strings.Replace(requestLogInsertSQL(1), "INSERT INTO", "INSERT OR FAIL INTO", 1)},
		{&w.insertN, strings.Replace(requestLogInsertSQL(logStmtRows), "INSERT INTO", "INSERT OR FAIL INTO", 1)},
		{&w.upsert, rollupUpsertSQL()},
	}
	for _, s := range stmts {
		p, err := w.prepare(c, s.sql)
		if err != nil {
			w.finalize(c)
			return err
		}
		*s.dst = p
	}
	w.conn = c
	return nil
}

// finalize frees the compiled statements of c (a no-op for those never made).
func (w *logWriter) finalize(c rawSQLite) {
	for _, p := range []*uintptr{&w.begin, &w.commit, &w.rollback, &w.insert1, &w.insertN, &w.upsert} {
		if *p != 0 {
			sqlite3.Xsqlite3_finalize(c.tls, *p)
			*p = 0
		}
	}
}

// close finalises the statements while their connection is still open (the
// store calls it before closing the database).
func (w *logWriter) close(c rawSQLite) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.conn == c {
		w.finalize(c)
		w.conn = rawSQLite{}
	}
}

// run executes a compiled statement that returns no rows, then resets it.
func (c rawSQLite) run(p uintptr, what string) error {
	rc := sqlite3.Xsqlite3_step(c.tls, p)
	sqlite3.Xsqlite3_reset(c.tls, p)
	if rc != sqliteDone {
		return c.errAt(what, rc)
	}
	return nil
}

// binder binds one statement's parameters in order.
type binder struct {
	c    rawSQLite
	p    uintptr
	i    int32
	base uintptr // the batch's C copy of logWriter.text
	rc   int32   // the first failure
}

// int binds v in the next place.
func (b *binder) int(v int64) {
	b.i++
	if rc := sqlite3.Xsqlite3_bind_int64(b.c.tls, b.p, b.i, v); rc != sqliteOK && b.rc == sqliteOK {
		b.rc = rc
	}
}

// intIf binds v in the next place when bind is true, else leaves the value
// bound there before.
func (b *binder) intIf(bind bool, v int64) {
	if bind {
		b.int(v)
		return
	}
	b.i++
}

// textIf binds span in the next place when bind is true, else leaves the
// value bound there before.
func (b *binder) textIf(bind bool, span [2]int) {
	if bind {
		b.text(span)
		return
	}
	b.i++
}

// text binds the string at span = [offset, length] of the batch's text.
func (b *binder) text(span [2]int) {
	b.i++
	if rc := sqlite3.Xsqlite3_bind_text(b.c.tls, b.p, b.i, b.base+uintptr(span[0]), int32(span[1]), 0); rc != sqliteOK && b.rc == sqliteOK {
		b.rc = rc
	}
}

// logText is where a row's strings sit in logWriter.text.
type logText struct {
	requestID, apiKeyID, clientFormat, model, provider, connectionID, attempts, errorCode, queueReason [2]int
}

// rollupText is one rollup cell with where its key's strings sit in
// logWriter.text.
type rollupText struct {
	key                          rollupKey
	cell                         *rollupRow
	conn, model, keyID, provider [2]int
}

// put copies s into w.text and returns its span.
func (w *logWriter) put(s string) [2]int {
	off := len(w.text)
	w.text = append(w.text, s...)
	return [2]int{off, len(s)}
}

// insert writes rows and their rollup cells in one transaction on c.
func (w *logWriter) insert(c rawSQLite, rows []RequestLog, cells map[rollupKey]*rollupRow) (err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.ready(c); err != nil {
		return err
	}
	// Every string of the batch goes into one buffer, copied into one C
	// allocation that the statements point into (bound SQLITE_STATIC: SQLite
	// reads it during the step and copies what it stores) until the batch ends.
	w.text = append(w.text[:0], 0) // never empty
	texts := make([]logText, len(rows))
	for i := range rows {
		r := &rows[i]
		texts[i] = logText{w.put(r.RequestID), w.put(r.APIKeyID), w.put(r.ClientFormat), w.put(r.Model), w.put(r.Provider),
			w.put(r.ConnectionID), w.put(r.Attempts), w.put(r.ErrorCode), w.put(r.QueueReason)}
	}
	keys := make([]rollupText, 0, len(cells))
	for k, a := range cells {
		keys = append(keys, rollupText{k, a, w.put(k.conn), w.put(k.model), w.put(k.keyID), w.put(k.provider)})
	}
	base := libc.Xmalloc(c.tls, types.Size_t(len(w.text)))
	if base == 0 {
		return errors.New("request log: out of memory")
	}
	defer libc.Xfree(c.tls, base)
	copy(libc.GoBytes(base, len(w.text)), w.text) // GoBytes is a view of the C memory

	// The statements point into base until the batch ends: their bindings
	// are cleared before it is freed (deferred after, so run before, Xfree).
	defer func() {
		for _, p := range []uintptr{w.insert1, w.insertN, w.upsert} {
			sqlite3.Xsqlite3_clear_bindings(c.tls, p)
		}
	}()
	if err := c.run(w.begin, "begin"); err != nil {
		return err
	}
	defer func() {
		// A failed statement may or may not have ended the transaction
		// already; none may stay open on the shared connection.
		if err != nil && sqlite3.Xsqlite3_get_autocommit(c.tls, c.db) == 0 {
			_ = c.run(w.rollback, "rollback")
		}
	}()
	// A statement keeps its bindings from one step to the next, so a value
	// equal to the one bound in the same place by the statement's previous
	// step in this batch is not bound again (consecutive requests mostly share
	// key, format, model, provider, connection, status...). prev1 and prevN
	// are the rows each statement bound last (nil: none yet in this batch).
	var prev1, prevN []RequestLog
	for len(rows) > 0 {
		p, n, prev := w.insert1, 1, &prev1
		if len(rows) >= logStmtRows {
			p, n, prev = w.insertN, logStmtRows, &prevN
		}
		b := binder{c: c, p: p, base: base}
		for i := range n {
			r, t := &rows[i], &texts[i]
			q, all := r, *prev == nil
			if !all {
				q = &(*prev)[i]
			}
			b.textIf(all || r.RequestID != q.RequestID, t.requestID)
			b.intIf(all || r.CreatedAt != q.CreatedAt, r.CreatedAt)
			b.textIf(all || r.APIKeyID != q.APIKeyID, t.apiKeyID)
			b.textIf(all || r.ClientFormat != q.ClientFormat, t.clientFormat)
			b.textIf(all || r.Model != q.Model, t.model)
			b.textIf(all || r.Provider != q.Provider, t.provider)
			b.textIf(all || r.ConnectionID != q.ConnectionID, t.connectionID)
			b.intIf(all || r.Status != q.Status, int64(r.Status))
			b.intIf(all || r.Stream != q.Stream, boolInt(r.Stream))
			b.intIf(all || r.AttemptCount != q.AttemptCount, int64(r.AttemptCount))
			b.textIf(all || r.Attempts != q.Attempts, t.attempts)
			b.intIf(all || r.LatencyMs != q.LatencyMs, r.LatencyMs)
			b.textIf(all || r.ErrorCode != q.ErrorCode, t.errorCode)
			b.intIf(all || r.PromptTokens != q.PromptTokens, int64(r.PromptTokens))
			b.intIf(all || r.CompletionTokens != q.CompletionTokens, int64(r.CompletionTokens))
			b.intIf(all || r.QueueMs != q.QueueMs, r.QueueMs)
			b.textIf(all || r.QueueReason != q.QueueReason, t.queueReason)
			b.intIf(all || r.CachedTokens != q.CachedTokens, int64(r.CachedTokens))
		}
		if b.rc != sqliteOK {
			return c.errAt("bind", b.rc)
		}
		if err := c.run(p, "insert"); err != nil {
			return err
		}
		*prev = rows[:n]
		rows, texts = rows[n:], texts[n:]
	}
	for _, k := range keys {
		a := k.cell
		b := binder{c: c, p: w.upsert, base: base}
		b.int(k.key.res)
		b.int(k.key.bucket)
		b.text(k.conn)
		b.text(k.model)
		b.text(k.keyID)
		b.text(k.provider)
		for _, v := range []int64{a.requests, a.errors, a.in, a.out, a.cached} {
			b.int(v)
		}
		for _, v := range a.lat[:len(LatencyBinsMs)+1] {
			b.int(v)
		}
		if b.rc != sqliteOK {
			return c.errAt("bind", b.rc)
		}
		if err := c.run(w.upsert, "rollup"); err != nil {
			return err
		}
	}
	return c.run(w.commit, "commit")
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
