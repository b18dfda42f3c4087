package store

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
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
// cost (docs/BENCHMARKS.md, issue 19). logWriter instead owns a second SQLite
// connection to the store's file, opened through the public API of the SQLite
// library the driver itself runs on (modernc.org/sqlite/lib, so one library
// instance, one VFS and one set of file locks in the process), after the
// migrations ran, with the PRAGMAs of the store's DSN (sqlitePragmas). Its
// statements are compiled once and bound by index. What is written is exactly
// what the portable path (insertRequestLogsPortable) writes; a test holds the
// two equal.
//
// The store's GORM connection and this one are two connections to one WAL
// database: readers on either are never blocked and see a batch as soon as it
// commits; writers serialise on SQLite's write lock. Each side takes it in a
// way that waits (busy_timeout) rather than failing: the writer's batches
// start with BEGIN IMMEDIATE, GORM's transactions too (_txlock=immediate in
// the DSN: a deferred transaction that read before writing could not wait for
// the lock and would fail with SQLITE_BUSY), and its single statements take
// the lock at their start. A batch holds the lock about 1 ms.
//
// Should the connection not open (or not be the store's file in WAL mode),
// the store says why (RequestLogFallback, logged by the server at start) and
// batches take the portable path, as on PostgreSQL.

// rawSQLite is the C-level handle of one SQLite connection.
type rawSQLite struct {
	db  uintptr // sqlite3*
	tls *libc.TLS
}

// errLogWriterClosed is returned by a batch after Store.Close.
var errLogWriterClosed = errors.New("store: closed")

// logStmtRows is the rows of the multi-row INSERT (a batch's remainder goes
// one row at a time through the single-row one). With the statement compiled
// once, more rows per statement only save per-step overhead: 8, 16, 32 and 64
// measured alike (≈ 3.1–3.3 cpu-µs per row in batches of 256).
const logStmtRows = 16

// logWriter owns the request log's SQLite connection and its compiled
// statements. mu hands both (and the connection's TLS, which must not be used
// by two goroutines at once) to one batch at a time, and guards them against
// a Close from another goroutine.
type logWriter struct {
	mu   sync.Mutex
	conn rawSQLite // db 0: closed
	// Compiled statements (sqlite3_stmt*).
	begin, commit, rollback, insert1, insertN, upsert, pruneLogs, pruneRollup uintptr
	// text gathers every string value of the batch being bound, before it is
	// copied into C memory for the statements to point into.
	text []byte
	// ctext is that C memory, ctextCap bytes, kept from one batch to the
	// next (0: none yet). The library's allocator serves a batch's text
	// (≈ 80 KB for 256 rows) from a 1 MiB mapping of its own, unmapped as
	// soon as its one block is freed: a buffer freed after every batch cost
	// an mmap, its page faults and a munmap per batch.
	ctext    uintptr
	ctextCap int
	// texts and keys are insert's working slices, kept between batches.
	texts []logText
	keys  []rollupText
}

// maxKeptText is the largest C text buffer kept between batches: a batch
// of unusually long strings (many attempts, long details) gets a buffer of
// its own, freed when it ends, so that one burst does not hold its size.
const maxKeptText = 256 << 10

// minKeptText is the smallest buffer made: a full batch of typical rows
// (256 of ≈ 250 bytes of strings) fits.
const minKeptText = 96 << 10

// textBuffer returns C memory for n bytes: the kept buffer when it is large
// enough, else a new one, kept for the next batches unless larger than
// maxKeptText (then release frees it). Called with mu held.
func (w *logWriter) textBuffer(n int) (uintptr, error) {
	if n <= w.ctextCap {
		return w.ctext, nil
	}
	c := w.conn
	size := max(n+n/2, minKeptText) // room for the next batches' longer strings
	if n <= maxKeptText {
		size = min(size, maxKeptText)
	}
	p := libc.Xmalloc(c.tls, types.Size_t(size))
	if p == 0 {
		return 0, errors.New("request log: out of memory")
	}
	if size > maxKeptText {
		return p, nil // freed by release
	}
	if w.ctext != 0 {
		libc.Xfree(c.tls, w.ctext)
	}
	w.ctext, w.ctextCap = p, size
	return p, nil
}

// release frees p unless it is the kept buffer. Called with mu held.
func (w *logWriter) release(p uintptr) {
	if p != w.ctext {
		libc.Xfree(w.conn.tls, p)
	}
}

// freeText frees the kept buffer. Called with mu held.
func (w *logWriter) freeText() {
	if w.ctext != 0 {
		libc.Xfree(w.conn.tls, w.ctext)
		w.ctext, w.ctextCap = 0, 0
	}
}

// sqliteOK, sqliteDone, sqliteRow are the result codes a call or step may
// end with.
const (
	sqliteOK   = sqlite3.SQLITE_OK
	sqliteDone = sqlite3.SQLITE_DONE
	sqliteRow  = sqlite3.SQLITE_ROW
)

// errAt is the connection's last error, with what was being done.
func (c rawSQLite) errAt(what string, rc int32) error {
	return fmt.Errorf("request log: %s: %s (%d)", what, libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db)), rc)
}

// logWriterFlags open the store's existing file read-write (never creating
// one: it exists once migrated), file: URIs understood as the driver does.
// NOMUTEX: logWriter.mu already gives the connection to one goroutine at a
// time, so SQLite's own per-call connection mutex would be redundant.
const logWriterFlags = sqlite3.SQLITE_OPEN_READWRITE | sqlite3.SQLITE_OPEN_URI | sqlite3.SQLITE_OPEN_NOMUTEX

// openLogWriter opens the request log's connection to the database at path,
// the store's, whose main file SQLite names file (as the store's connection
// reports it), applies the store's PRAGMAs, checks that it reached that very
// file in WAL mode and compiles the statements. It runs once the migrations
// have made the tables.
func openLogWriter(path, file string) (w *logWriter, err error) {
	c := rawSQLite{tls: libc.NewTLS()}
	defer func() {
		if err != nil {
			if c.db != 0 {
				if w != nil {
					w.finalize()
				}
				sqlite3.Xsqlite3_close_v2(c.tls, c.db)
			}
			c.tls.Close()
			w = nil
		}
	}()
	zPath, err := libc.CString(path)
	if err != nil {
		return nil, err
	}
	defer libc.Xfree(c.tls, zPath)
	p, rc, err := outPtr(c.tls, func(cell uintptr) int32 {
		return sqlite3.Xsqlite3_open_v2(c.tls, zPath, cell, logWriterFlags, 0)
	})
	if err != nil {
		return nil, err
	}
	c.db = p // set even on failure: open_v2 may return a handle to be closed
	if rc != sqliteOK {
		if c.db == 0 {
			return nil, fmt.Errorf("request log: open %s: %s (%d)", path, libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc)), rc)
		}
		return nil, c.errAt("open "+path, rc)
	}
	sqlite3.Xsqlite3_extended_result_codes(c.tls, c.db, 1)
	for _, pragma := range sqlitePragmas() {
		if err := c.exec("PRAGMA " + pragma); err != nil {
			return nil, err
		}
	}
	if mode, err := c.queryText("PRAGMA journal_mode"); err != nil {
		return nil, err
	} else if mode != "wal" {
		return nil, fmt.Errorf("request log: journal mode is %q, not wal", mode)
	}
	if got, err := c.queryText("SELECT file FROM pragma_database_list WHERE name = 'main'"); err != nil {
		return nil, err
	} else if got == "" || got != file {
		return nil, fmt.Errorf("request log: opened %q, not the store's file %q", got, file)
	}
	w = &logWriter{conn: c}
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
		{&w.pruneLogs, pruneLogsSQL},
		{&w.pruneRollup, pruneRollupSQL},
	}
	for _, s := range stmts {
		if *s.dst, err = c.prepare(s.sql, sqlite3.SQLITE_PREPARE_PERSISTENT); err != nil {
			return w, err // the deferred cleanup finalises what was compiled
		}
	}
	return w, nil
}

// outPtr calls f with a C cell for a pointer result (sqlite3** and the like)
// and returns what f left there, with f's result code. The cell lives in the
// library's C heap: the transpiled code does pointer arithmetic that the race
// detector's checkptr refuses on Go memory.
func outPtr(tls *libc.TLS, f func(cell uintptr) int32) (uintptr, int32, error) {
	cell := libc.Xmalloc(tls, types.Size_t(ptrSize))
	if cell == 0 {
		return 0, 0, errors.New("request log: out of memory")
	}
	defer libc.Xfree(tls, cell)
	out := libc.GoBytes(cell, ptrSize) // a view of the C memory, not a copy
	clear(out)
	rc := f(cell)
	if ptrSize == 4 {
		return uintptr(binary.NativeEndian.Uint32(out)), rc, nil
	}
	return uintptr(binary.NativeEndian.Uint64(out)), rc, nil
}

// ptrSize is the size of a C pointer.
const ptrSize = int(unsafe.Sizeof(uintptr(0)))

// prepare compiles sql (with prepare_v3's flags).
func (c rawSQLite) prepare(sql string, flags uint32) (uintptr, error) {
	z, err := libc.CString(sql)
	if err != nil {
		return 0, err
	}
	defer libc.Xfree(c.tls, z)
	p, rc, err := outPtr(c.tls, func(cell uintptr) int32 {
		return sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, z, int32(len(sql)), flags, cell, 0)
	})
	if err != nil {
		return 0, err
	}
	if rc != sqliteOK {
		return 0, c.errAt("prepare", rc)
	}
	if p == 0 { // blank SQL: nothing compiled
		return 0, fmt.Errorf("request log: nothing to run in %q", sql)
	}
	return p, nil
}

// exec runs one statement once, discarding any rows it returns.
func (c rawSQLite) exec(sql string) error {
	p, err := c.prepare(sql, 0)
	if err != nil {
		return err
	}
	defer sqlite3.Xsqlite3_finalize(c.tls, p)
	for {
		switch rc := sqlite3.Xsqlite3_step(c.tls, p); rc {
		case sqliteRow:
		case sqliteDone:
			return nil
		default:
			return c.errAt(sql, rc)
		}
	}
}

// queryText runs one statement once and returns its first row's first column
// as text ("" when there is no row).
func (c rawSQLite) queryText(sql string) (string, error) {
	p, err := c.prepare(sql, 0)
	if err != nil {
		return "", err
	}
	defer sqlite3.Xsqlite3_finalize(c.tls, p)
	switch rc := sqlite3.Xsqlite3_step(c.tls, p); rc {
	case sqliteRow:
		return libc.GoString(sqlite3.Xsqlite3_column_text(c.tls, p, 0)), nil
	case sqliteDone:
		return "", nil
	default:
		return "", c.errAt(sql, rc)
	}
}

// finalize frees the compiled statements (a no-op for those never made).
func (w *logWriter) finalize() {
	for _, p := range []*uintptr{&w.begin, &w.commit, &w.rollback, &w.insert1, &w.insertN, &w.upsert, &w.pruneLogs, &w.pruneRollup} {
		if *p != 0 {
			sqlite3.Xsqlite3_finalize(w.conn.tls, *p)
			*p = 0
		}
	}
}

// close finalises the statements, then closes the connection and frees its
// TLS. The statements go first: a connection closed with live statements
// would linger as a zombie, keeping the file (and its -wal) open. Closing
// twice is a no-op.
func (w *logWriter) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.conn
	if c.db == 0 {
		return nil
	}
	w.finalize()
	w.freeText()
	rc := sqlite3.Xsqlite3_close_v2(c.tls, c.db)
	var err error
	if rc != sqliteOK {
		err = c.errAt("close", rc)
	}
	c.tls.Close()
	w.conn = rawSQLite{}
	return err
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

// float binds v in the next place.
func (b *binder) float(v float64) {
	b.i++
	if rc := sqlite3.Xsqlite3_bind_double(b.c.tls, b.p, b.i, v); rc != sqliteOK && b.rc == sqliteOK {
		b.rc = rc
	}
}

// nullFloat binds v in the next place, NULL when it is not valid.
func (b *binder) nullFloat(v sql.NullFloat64) {
	if v.Valid {
		b.float(v.Float64)
		return
	}
	b.i++
	if rc := sqlite3.Xsqlite3_bind_null(b.c.tls, b.p, b.i); rc != sqliteOK && b.rc == sqliteOK {
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

// insert writes rows and their rollup cells in one transaction on the
// writer's connection. With keep > 0 the transaction first deletes the
// oldest rows, leaving keep − len(rows) (at least none), so that the log
// holds the newest keep rows once the batch is in: pages freed by the delete
// are reused by the inserts of the same transaction and reach the WAL once,
// where a separate prune's commit writes them freed and the next batches'
// commits write them again.
func (w *logWriter) insert(rows []RequestLog, cells map[rollupKey]*rollupRow, keep int) (err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.conn
	if c.db == 0 {
		return errLogWriterClosed
	}
	// Every string of the batch goes into one buffer, copied into one C
	// allocation that the statements point into (bound SQLITE_STATIC: SQLite
	// reads it during the step and copies what it stores) until the batch ends.
	w.text = append(w.text[:0], 0) // never empty
	texts := slices.Grow(w.texts[:0], len(rows))[:len(rows)]
	w.texts = texts
	for i := range rows {
		r := &rows[i]
		texts[i] = logText{w.put(r.RequestID), w.put(r.APIKeyID), w.put(r.ClientFormat), w.put(r.Model), w.put(r.Provider),
			w.put(r.ConnectionID), w.put(r.Attempts), w.put(r.ErrorCode), w.put(r.QueueReason)}
	}
	keys := w.keys[:0]
	for k, a := range cells {
		keys = append(keys, rollupText{k, a, w.put(k.conn), w.put(k.model), w.put(k.keyID), w.put(k.provider)})
	}
	w.keys = keys
	defer clear(w.keys) // no rollup key's strings stay reachable from the kept slice
	base, err := w.textBuffer(len(w.text))
	if err != nil {
		return err
	}
	defer w.release(base)
	copy(libc.GoBytes(base, len(w.text)), w.text) // GoBytes is a view of the C memory

	// The statements point into base until the batch ends: their bindings
	// are cleared before it is released (deferred after, so run before, release).
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
		// already; none may stay open: it would hold the database's write
		// lock and keep every other writer waiting.
		if err != nil && sqlite3.Xsqlite3_get_autocommit(c.tls, c.db) == 0 {
			_ = c.run(w.rollback, "rollback")
		}
	}()
	// A statement keeps its bindings from one step to the next, so a value
	// equal to the one bound in the same place by the statement's previous
	// step in this batch is not bound again (consecutive requests mostly share
	// key, format, model, provider, connection, status...). prev1 and prevN
	// are the rows each statement bound last (nil: none yet in this batch).
	if keep > 0 {
		b := binder{c: c, p: w.pruneLogs}
		b.int(int64(max(keep-len(rows), 0)))
		if b.rc != sqliteOK {
			return c.errAt("bind", b.rc)
		}
		if err := c.run(w.pruneLogs, "retention"); err != nil {
			return err
		}
	}
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
			b.nullFloat(r.CostUSD)
			b.float(r.SavedUSD)
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
		b.float(a.cost)
		b.float(a.saved)
		b.int(a.unpriced)
		if b.rc != sqliteOK {
			return c.errAt("bind", b.rc)
		}
		if err := c.run(w.upsert, "rollup"); err != nil {
			return err
		}
	}
	return c.run(w.commit, "commit")
}

// prune deletes the request log's rows beyond the newest keep, and the usage
// rollup's cells older than each resolution keeps, in one transaction on the
// writer's connection (what Store.PruneRequestLogs does through GORM): its
// statements are compiled once, and its page cache holds the table's interior
// pages, where the GORM connection's, invalidated by every batch this one
// commits, would read them again from the file.
func (w *logWriter) prune(keep int) (err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.conn
	if c.db == 0 {
		return errLogWriterClosed
	}
	if err := c.run(w.begin, "begin"); err != nil {
		return err
	}
	defer func() {
		if err != nil && sqlite3.Xsqlite3_get_autocommit(c.tls, c.db) == 0 {
			_ = c.run(w.rollback, "rollback")
		}
	}()
	b := binder{c: c, p: w.pruneLogs}
	b.int(int64(keep))
	if b.rc != sqliteOK {
		return c.errAt("bind", b.rc)
	}
	if err := c.run(w.pruneLogs, "prune"); err != nil {
		return err
	}
	for _, r := range RollupResolutions {
		b := binder{c: c, p: w.pruneRollup}
		b.int(r.Res)
		b.int(r.Res)
		b.int(r.KeepMs)
		if b.rc != sqliteOK {
			return c.errAt("bind", b.rc)
		}
		if err := c.run(w.pruneRollup, "prune rollup"); err != nil {
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
