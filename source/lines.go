package source

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// recordLines finds the line a CSV record starts on, for a file read by
// record. It keeps only the records after which lines and records part:
// one that spans lines (a quoted line break) or follows a blank line,
// which readers skip.
type recordLines struct {
	records []int64 // records from which line = record + shift[i]
	shift   []int64
}

// line returns the line of a record, counting data records from 1 (the
// header is record 0).
func (r *recordLines) line(record int64) int64 {
	i := sort.Search(len(r.records), func(i int) bool { return r.records[i] > record }) - 1
	shift := int64(1) // the header is line 1, so record n is on line n+1
	if i >= 0 {
		shift = r.shift[i]
	}
	return record + shift
}

// csvShape is what one pass over a CSV file's bytes found: whether it keeps
// to the plain form that the engine and lakeswap's own reader split into
// the same fields, and where its records start.
type csvShape struct {
	plain   bool
	why     string // why the file is not plain
	whyLine int64  // and on which line
	lines   recordLines
	records int64 // at least the records the file holds, header included
}

// maxPlainRecord is the longest record read through the engine, whose
// reader stops at 2 MB a line by default.
const maxPlainRecord = 1 << 20

// readSize is the buffer a pass over a file reads it through: 1 MiB, or
// the whole of a smaller file that is not compressed.
func readSize(path string) int {
	const most = 1 << 20
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 && compression(path) == "" && fi.Size() < most {
		return int(fi.Size()) + 1 // the file, and its end
	}
	return most
}

// checkCSV reads a CSV file once, decompressing it as its name says (which
// checks a gzip or zstd checksum). The plain form: line ends all LF or all
// CRLF, with no other CR outside a quoted value and none inside one; a
// quote opens a field or closes it (right before a comma or a line end),
// or is doubled inside a quoted value; no blank line before the header;
// every record has the header's number of fields and at most
// maxPlainRecord bytes. Blank lines between records are skipped, as both
// readers do.
func checkCSV(path string) (*csvShape, error) { return checkCSVIn(path, plainDialect) }

// dialect is the two characters that split a CSV file into fields: what
// stands between fields and what quotes a value.
type dialect struct{ delim, quote byte }

var plainDialect = dialect{',', '"'}

// checkCSVIn is checkCSV of a file split by d.
func checkCSVIn(path string, d dialect) (*csvShape, error) { return checkCSVWith(path, d, true) }

// checkCSVWith is checkCSVIn, reading whole lines at a time where it can
// (fast): a run of lines with no quote and no CR is split with the
// library's vectorised searches rather than byte by byte, which took a
// tenth of a 10M-row publish, all of it before the engine's read starts.
// Tests read the same files both ways.
func checkCSVWith(path string, d dialect, fast bool) (*csvShape, error) {
	f, err := openText(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	const (
		fieldStart = iota
		unquoted
		quoted
		quoteInQuoted // a quote inside a quoted value: closing, or the first of two
	)
	shape := &csvShape{plain: true}
	notPlain := func(why string, line int64) {
		if shape.plain {
			shape.plain, shape.why, shape.whyLine = false, why, line
		}
	}
	var (
		state          = fieldStart
		line, record   = int64(1), int64(0)
		lineStart      = true
		fields, header = 0, -1
		recordBytes    = 0
		lastShift      = int64(1)
		sawCRLF, sawLF bool
		pendingCR      bool
		first          = true
		buf            = make([]byte, readSize(path))
		endRecord      func()
		special        [256]bool
	)
	special[d.delim], special[d.quote], special['\r'], special['\n'] = true, true, true, true
	endRecord = func() {
		fields++
		if header < 0 {
			header = fields
		} else if fields != header {
			notPlain(fmt.Sprintf("%d fields, the header has %d", fields, header), line)
		}
		fields, recordBytes = 0, 0
		record++
		state, lineStart = fieldStart, true
	}
	lineEnd := func(crlf bool) {
		if crlf {
			sawCRLF = true
		} else {
			sawLF = true
		}
		if sawCRLF && sawLF {
			notPlain("the file mixes LF and CRLF line ends", line)
		}
	}
	// recordEnd is an LF outside a quoted value.
	recordEnd := func() {
		lineEnd(false)
		endRecord()
		line++
	}
	for {
		n, rerr := f.Read(buf)
		b := buf[:n]
		if first && n >= 3 && string(b[:3]) == "\ufeff" {
			b = b[3:]
		}
		if n > 0 {
			first = false
		}
		plainTo := -1 // b[:plainTo] holds no quote and no CR, from where it was last found
		for i := 0; i < len(b); i++ {
			if fast && lineStart && !pendingCR && state == fieldStart {
				if i >= plainTo {
					plainTo = plainEnd(b, i, d.quote)
				}
				// Whole lines of unquoted fields, each checked as the
				// loop below would check it, byte by byte.
				for i < plainTo {
					nl := bytes.IndexByte(b[i:plainTo], '\n')
					if nl < 0 {
						break
					}
					if nl == 0 { // a blank line
						lineEnd(false)
						if header < 0 {
							notPlain("a blank line before the header", line)
						}
						line++
						i++
						continue
					}
					if shift := line - record; shift != lastShift {
						shape.lines.records = append(shape.lines.records, record)
						shape.lines.shift = append(shape.lines.shift, shift)
						lastShift = shift
					}
					if nl+1 > maxPlainRecord {
						notPlain("a record longer than 1 MiB", line)
					}
					fields = bytes.Count(b[i:i+nl], []byte{d.delim})
					lineEnd(false)
					endRecord()
					line++
					i += nl + 1
				}
				if i >= len(b) {
					break
				}
			}
			c := b[i]
			if pendingCR {
				pendingCR = false
				if c != '\n' {
					notPlain("a CR that does not end a line", line)
				} else {
					lineEnd(true)
					if lineStart { // a blank line
						if header < 0 {
							notPlain("a blank line before the header", line)
						}
						line++
						continue
					}
					endRecord()
					line++
					continue
				}
			}
			if lineStart {
				if c == '\n' || c == '\r' {
					if c == '\r' {
						pendingCR = true
						continue
					}
					lineEnd(false)
					if header < 0 {
						notPlain("a blank line before the header", line)
					}
					line++
					continue
				}
				lineStart = false
				if shift := line - record; shift != lastShift {
					shape.lines.records = append(shape.lines.records, record)
					shape.lines.shift = append(shape.lines.shift, shift)
					lastShift = shift
				}
			}
			if state == unquoted && !special[c] {
				// The common case: run to the next comma, quote or line end.
				j := i + 1
				for j < len(b) && !special[b[j]] {
					j++
				}
				recordBytes += j - i
				if recordBytes > maxPlainRecord {
					notPlain("a record longer than 1 MiB", line)
				}
				i = j - 1
				continue
			}
			recordBytes++
			if recordBytes > maxPlainRecord {
				notPlain("a record longer than 1 MiB", line)
			}
			switch state {
			case fieldStart, unquoted:
				switch c {
				case d.delim:
					fields++
					state = fieldStart
				case '\n':
					recordEnd()
				case '\r':
					pendingCR = true
				case d.quote:
					if state == unquoted {
						notPlain("a quote inside an unquoted value", line)
					}
					state = quoted
				default:
					state = unquoted
				}
			case quoted:
				switch c {
				case d.quote:
					state = quoteInQuoted
				case '\n':
					line++
				case '\r':
					notPlain("a CR inside a quoted value", line)
				}
			case quoteInQuoted:
				switch c {
				case d.quote:
					state = quoted
				case d.delim:
					fields++
					state = fieldStart
				case '\n':
					recordEnd()
				case '\r':
					pendingCR = true
					state = fieldStart
				default:
					notPlain("text after a closing quote", line)
					state = unquoted
				}
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return nil, &InputError{File: path, Err: rerr}
		}
	}
	if pendingCR {
		notPlain("a CR that does not end a line", line)
	}
	if state == quoted {
		notPlain("a quoted value that does not end", line)
	}
	if !lineStart {
		endRecord() // the last record has no line end
	}
	shape.records = record + 1
	return shape, nil
}

// plainEnd is where, from b[i], the first quote or CR stands, or the end
// of b.
func plainEnd(b []byte, i int, quote byte) int {
	end := len(b)
	if q := bytes.IndexByte(b[i:], quote); q >= 0 {
		end = i + q
	}
	if r := bytes.IndexByte(b[i:end], '\r'); r >= 0 {
		end = i + r
	}
	return end
}
