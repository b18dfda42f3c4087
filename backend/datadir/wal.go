package datadir

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// SQLite keeps a WAL database's recent writes in omniroute.db-wal until a
// checkpoint copies them into omniroute.db. When it opens the database after
// a crash it replays the WAL's frames in order and stops, silently, at the
// first frame whose salt or cumulative checksum does not match: every
// transaction after a damaged frame is dropped, and the next write or
// checkpoint overwrites it. inspectWAL reads the WAL the way SQLite's
// recovery does, before SQLite ever sees it, and reports committed
// transactions that recovery would drop (the format:
// https://www.sqlite.org/fileformat2.html#walformat).

// WAL format constants.
const (
	walHeaderSize      = 32
	walFrameHeaderSize = 24
	walMagicLE         = 0x377f0682 // checksums over little-endian words
	walMagicBE         = 0x377f0683 // checksums over big-endian words
	walVersion         = 3007000
)

// walReport is what inspectWAL found.
type walReport struct {
	size int64 // the file's size (0: no WAL or an empty one)
	// badHeader: the file holds more than a header but the header is not a
	// valid one, so SQLite ignores the whole file.
	badHeader bool
	// applied is how many frames recovery applies (through the last valid
	// commit frame), commits how many transactions they hold.
	applied, commits int
	// damagedAt is the index of the first frame recovery rejects while a
	// committed transaction follows it (-1: none); lostCommits counts the
	// committed transactions (commit frames with the WAL's current salt)
	// after it.
	damagedAt   int
	lostCommits int
	// offset is the byte offset of the damaged frame.
	offset int64
}

// damaged reports whether SQLite's recovery would silently drop committed
// transactions of this WAL.
func (r walReport) damaged() bool { return r.badHeader || r.lostCommits > 0 }

// inspectWAL reads the WAL at path. A missing file is an empty report.
func inspectWAL(path string) (walReport, error) {
	rep := walReport{damagedAt: -1}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return rep, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return rep, err
	}
	rep.size = st.Size()
	if rep.size < walHeaderSize {
		return rep, nil // no header yet: nothing was ever committed to it
	}
	var hdr [walHeaderSize]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil {
		return rep, err
	}
	magic := binary.BigEndian.Uint32(hdr[0:4])
	pageSize := int64(binary.BigEndian.Uint32(hdr[8:12]))
	bigEndian := magic == walMagicBE
	if (magic != walMagicLE && magic != walMagicBE) || binary.BigEndian.Uint32(hdr[4:8]) != walVersion ||
		pageSize < 512 || pageSize > 65536 || pageSize&(pageSize-1) != 0 {
		rep.badHeader = rep.size > walHeaderSize
		return rep, nil
	}
	s0, s1 := walChecksum(bigEndian, hdr[:24], 0, 0)
	if s0 != binary.BigEndian.Uint32(hdr[24:28]) || s1 != binary.BigEndian.Uint32(hdr[28:32]) {
		rep.badHeader = rep.size > walHeaderSize
		return rep, nil
	}
	salt := hdr[16:24]
	frameSize := walFrameHeaderSize + pageSize
	frame := make([]byte, frameSize)
	broken := false
	for i := 0; ; i++ {
		off := walHeaderSize + int64(i)*frameSize
		if off+frameSize > rep.size {
			break
		}
		if _, err := f.ReadAt(frame, off); err != nil {
			return rep, err
		}
		pgno := binary.BigEndian.Uint32(frame[0:4])
		commit := binary.BigEndian.Uint32(frame[4:8])
		ours := pgno != 0 && bytes.Equal(frame[8:16], salt)
		if !broken {
			if ours {
				c0, c1 := walChecksum(bigEndian, frame[:8], s0, s1)
				c0, c1 = walChecksum(bigEndian, frame[walFrameHeaderSize:], c0, c1)
				if c0 == binary.BigEndian.Uint32(frame[16:20]) && c1 == binary.BigEndian.Uint32(frame[20:24]) {
					s0, s1 = c0, c1
					if commit != 0 {
						rep.applied, rep.commits = i+1, rep.commits+1
					}
					continue
				}
			}
			// Recovery stops here. Frames after it are either an
			// uncommitted transaction's (harmless) or, when one of them
			// commits under the current salt, lost data.
			broken = true
			rep.damagedAt, rep.offset = i, off
			continue
		}
		if ours && commit != 0 {
			rep.lostCommits++
		}
	}
	if rep.lostCommits == 0 {
		rep.damagedAt, rep.offset = -1, 0
	}
	return rep, nil
}

// walChecksum is SQLite's WAL checksum (walChecksumBytes): over 32-bit words
// of b, in the byte order the WAL's magic names, continuing from s0, s1.
func walChecksum(bigEndian bool, b []byte, s0, s1 uint32) (uint32, uint32) {
	order := binary.ByteOrder(binary.LittleEndian)
	if bigEndian {
		order = binary.BigEndian
	}
	for i := 0; i+8 <= len(b); i += 8 {
		s0 += order.Uint32(b[i:]) + s1
		s1 += order.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}

// ErrDamagedWAL is returned when omniroute.db-wal holds committed
// transactions SQLite would drop without a word (a damaged frame before
// them, or a damaged header).
var ErrDamagedWAL = errors.New("damaged write-ahead log")

// checkWAL refuses a WAL whose committed transactions SQLite's recovery would
// silently drop; with accept, it copies the WAL aside (so nothing is lost
// for good) and lets the start go on with the transactions before the damage.
func (d *Dir) checkWAL(accept bool, now func() string) error {
	wal := d.File(DBFile + "-wal")
	rep, err := inspectWAL(wal)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", wal, err)
	}
	if !rep.damaged() {
		return nil
	}
	var what string
	if rep.badHeader {
		what = fmt.Sprintf("its header is damaged, so SQLite would ignore all %d bytes of it (every write since the last checkpoint)", rep.size)
	} else {
		what = fmt.Sprintf("frame %d (byte %d) fails its checksum, so SQLite would apply the %d transaction(s) before it and silently drop the %d committed after it",
			rep.damagedAt+1, rep.offset, rep.commits, rep.lostCommits)
	}
	if !accept {
		return fmt.Errorf("%w: %s: %s. Nothing was changed. Restore %s together with %s from the same backup; "+
			"or start with `omniroute --accept-damaged-wal` to keep only the transactions before the damage (the damaged log is copied aside first); "+
			"or start fresh with `omniroute --reset` (the old files are moved aside, not deleted)",
			ErrDamagedWAL, wal, what, DBFile, DBFile+"-wal")
	}
	dst := d.File(DBFile + "-wal.damaged-" + now())
	if err := copyFile(wal, dst); err != nil {
		return fmt.Errorf("copy the damaged %s aside: %w", wal, err)
	}
	d.DamagedWAL = fmt.Sprintf("%s: %s; the damaged log was copied to %s", wal, what, dst)
	return nil
}

// copyFile copies src to a new owner-only file dst and syncs it.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
