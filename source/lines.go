package source

import (
	"io"
	"sort"
)

// recordLines finds the line a CSV record starts on, for a file read by
// record. It reads the file once, on the first question, and keeps only
// the records after which lines and records part: one that spans lines
// (a quoted line break) or follows a blank line, which readers skip.
type recordLines struct {
	path    string
	read    bool
	err     error
	records []int64 // records from which line = record + shift[i]
	shift   []int64
}

// line returns the line of a record, counting data records from 1 (the
// header is record 0).
func (r *recordLines) line(record int64) (int64, error) {
	if !r.read {
		r.read = true
		r.err = r.scan()
	}
	if r.err != nil {
		return 0, r.err
	}
	i := sort.Search(len(r.records), func(i int) bool { return r.records[i] > record }) - 1
	shift := int64(1) // the header is line 1, so record n is on line n+1
	if i >= 0 {
		shift = r.shift[i]
	}
	return record + shift, nil
}

// scan walks the file as a CSV reader does: a field that starts with a
// quote runs to its closing quote ("" inside stands for one), line breaks
// included; a line with nothing on it is skipped.
func (r *recordLines) scan() error {
	f, err := openText(r.path)
	if err != nil {
		return err
	}
	defer f.Close()
	const (
		fieldStart = iota
		unquoted
		quoted
		quoteInQuoted
	)
	state, line, record := fieldStart, int64(1), int64(0)
	lineStart, cr := true, false
	lastShift := int64(1)
	buf := make([]byte, 1<<20)
	for {
		n, err := f.Read(buf)
		for _, b := range buf[:n] {
			if lineStart {
				if b == '\n' { // a blank line
					line++
					cr = false
					continue
				}
				if b == '\r' && !cr {
					cr = true
					continue
				}
				cr = false
				lineStart = false
				if shift := line - record; shift != lastShift {
					r.records, r.shift = append(r.records, record), append(r.shift, shift)
					lastShift = shift
				}
			}
			switch {
			case b == '\n' && state != quoted:
				line++
				record++
				state, lineStart = fieldStart, true
			case b == '\n':
				line++
			case state == fieldStart && b == '"':
				state = quoted
			case state == quoted && b == '"':
				state = quoteInQuoted
			case state == quoteInQuoted && b == '"':
				state = quoted
			case b == ',' && state != quoted:
				state = fieldStart
			case state == fieldStart || state == quoteInQuoted:
				state = unquoted
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
