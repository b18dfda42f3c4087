package pricing

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// The user's pricing file (the pricingFile setting): JSON of the shipped
// catalogue's shape, {"entries": [{provider?, model, inputPerMTok,
// outputPerMTok, cachedInputPerMTok?, cacheWritePerMTok?, reasoningPerMTok?,
// date?, source?}]}. Its entries win over the shipped ones; an entry without
// a provider prices the model under every provider. Connection overrides
// still win over it.

// maxUserFile bounds the pricing file read (a catalogue is a few KiB).
const maxUserFile = 4 << 20

// userSet is the loaded file's entries, swapped whole (readers take no lock).
type userSet struct {
	entries []Entry
	byKey   map[key]Price // provider "" = every provider
	byModel map[string][]Price
}

func (t *Table) user() *userSet { return t.users.Load() }

// ParseFile reads a pricing file's bytes: every entry needs a model (1 to
// 256 characters) and valid prices; source, when an entry names none, is
// what it is listed with.
func ParseFile(data []byte, source string) ([]Entry, error) {
	var doc struct {
		Entries *[]Entry `json:"entries"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not a pricing file: %s", jsonProblem(err))
	}
	if doc.Entries == nil {
		return nil, errors.New(`not a pricing file: no "entries" array`)
	}
	out := make([]Entry, 0, len(*doc.Entries))
	seen := map[key]bool{}
	for i, e := range *doc.Entries {
		if e.Model == "" || len(e.Model) > 256 || len(e.Provider) > 256 {
			return nil, fmt.Errorf("entries[%d]: model must be 1 to 256 characters", i)
		}
		if err := e.Validate(); err != nil {
			return nil, fmt.Errorf("entries[%d] (%s): %v", i, e.Model, err)
		}
		k := key{e.Provider, e.Model}
		if seen[k] {
			return nil, fmt.Errorf("entries[%d]: %s/%s is listed twice", i, e.Provider, e.Model)
		}
		seen[k] = true
		if e.Source == "" {
			e.Source = source
		}
		e.Origin = OriginFile
		out = append(out, e)
	}
	return out, nil
}

// jsonProblem says what is wrong with a file that is not the JSON expected,
// never quoting its content (json's own errors quote the character or the
// number they met: a file that is not a pricing file is not echoed).
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("not valid JSON (at byte %d)", syn.Offset)
	case errors.As(err, &typ) && typ.Field != "":
		return fmt.Sprintf("%s has the wrong type (at byte %d)", typ.Field, typ.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("a value has the wrong type (at byte %d)", typ.Offset)
	}
	return "not valid JSON"
}

// SetUser replaces the user file's entries (nil: none).
func (t *Table) SetUser(entries []Entry) {
	if len(entries) == 0 {
		t.users.Store(nil)
		return
	}
	u := &userSet{entries: entries, byKey: make(map[key]Price, len(entries)), byModel: map[string][]Price{}}
	for _, e := range entries {
		u.byKey[key{e.Provider, e.Model}] = e.Price
		u.byModel[e.Model] = append(u.byModel[e.Model], e.Price)
	}
	t.users.Store(u)
}

// FileState is what GET /api/pricing says of the user's pricing file.
type FileState struct {
	Path     string    `json:"path"`
	Entries  int       `json:"entries"`
	LoadedAt time.Time `json:"loadedAt,omitzero"`
	// Error is why the file's latest version was not taken (the entries
	// loaded before it are kept).
	Error string `json:"error,omitempty"`
}

// FileLoader keeps the table's user entries in step with the pricingFile
// setting: Load when the setting changes (and at start), Poll on a timer to
// take a changed file. A bad file never replaces good entries (nor crashes
// anything): its error is kept for the API and the log.
type FileLoader struct {
	t   *Table
	now func() time.Time

	mu      sync.Mutex
	state   FileState
	modTime time.Time
	size    int64
}

// NewFileLoader loads files into t.
func NewFileLoader(t *Table, now func() time.Time) *FileLoader {
	return &FileLoader{t: t, now: now}
}

// Check reads and parses the file at path without applying it: the settings
// write's validation (nil for "": no file).
func Check(path string) ([]Entry, error) {
	if path == "" {
		return nil, nil
	}
	if !filepath.IsAbs(path) {
		return nil, errors.New("must be an absolute path")
	}
	// Only a regular file: a FIFO's open (or read) would wait for a writer
	// for ever, a device's read never ends. Checked before the open, which
	// does not block (O_NONBLOCK), and again on what was opened (the path
	// may have been swapped in between).
	if err := regular(os.Stat(path)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, openProblem(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err := regular(st, err); err != nil {
		return nil, err
	}
	// At most maxUserFile+1 bytes, whatever the size said (a file growing
	// while read is cut there and refused).
	data, err := io.ReadAll(io.LimitReader(f, maxUserFile+1))
	if err != nil {
		return nil, errors.New("cannot be read")
	}
	if len(data) > maxUserFile {
		return nil, fmt.Errorf("is larger than %d bytes", maxUserFile)
	}
	return ParseFile(data, "file "+path)
}

// regular refuses what is not a regular file of at most maxUserFile bytes.
func regular(st fs.FileInfo, err error) error {
	if err != nil {
		return openProblem(err)
	}
	if !st.Mode().IsRegular() {
		return errors.New("is not a regular file")
	}
	if st.Size() > maxUserFile {
		return fmt.Errorf("is larger than %d bytes", maxUserFile)
	}
	return nil
}

// openProblem names why a file cannot be opened, without the OS error's
// text (it repeats the path; the caller names it once).
func openProblem(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such file")
	case errors.Is(err, fs.ErrPermission):
		return errors.New("cannot be read: permission denied")
	}
	return errors.New("cannot be read")
}

// Load takes the file at path now ("" removes the user entries). On an
// error the entries loaded before are kept (a new path's error drops them:
// they came from another file) and the error is returned and remembered.
func (l *FileLoader) Load(path string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.loadLocked(path)
}

func (l *FileLoader) loadLocked(path string) error {
	if path == "" {
		l.t.SetUser(nil)
		l.state, l.modTime, l.size = FileState{}, time.Time{}, 0
		return nil
	}
	mod, size := stat(path)
	entries, err := Check(path)
	if path != l.state.Path {
		l.state = FileState{Path: path}
		l.t.SetUser(nil)
	}
	l.modTime, l.size = mod, size
	if err != nil {
		l.state.Error = err.Error()
		return fmt.Errorf("pricing file %s: %w", path, err)
	}
	l.t.SetUser(entries)
	l.state = FileState{Path: path, Entries: len(entries), LoadedAt: l.now().UTC()}
	return nil
}

// Poll reloads the file when path is not the one loaded or the file changed
// (its modification time or size) since; changed reports a reload.
func (l *FileLoader) Poll(path string) (changed bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if path == l.state.Path {
		if path == "" {
			return false, nil
		}
		if mod, size := stat(path); mod.Equal(l.modTime) && size == l.size {
			return false, nil
		}
	}
	return true, l.loadLocked(path)
}

// State is the file's state for GET /api/pricing (nil: no file set).
func (l *FileLoader) State() *FileState {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state.Path == "" {
		return nil
	}
	s := l.state
	return &s
}

// stat is a file's modification time and size (zero when it cannot be read).
func stat(path string) (time.Time, int64) {
	st, err := os.Stat(path)
	if err != nil {
		return time.Time{}, -1
	}
	return st.ModTime(), st.Size()
}
