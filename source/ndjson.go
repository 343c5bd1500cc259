package source

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
)

// NDJSON is parsed on every core: the file is cut into blocks of whole
// lines, each block's rows are cast by a worker, and the batches reach fn
// in the file's order, so that rows, their lines and the first refusal
// are exactly those of reading the file line by line.

// ndjsonBlockBytes is about how much of a file one worker casts at a time.
var ndjsonBlockBytes int64 = 4 << 20

// ndjsonBlock is whole lines of a file, the first of them line first.
type ndjsonBlock struct {
	data  []byte
	first int64
	err   error // the read error right after data, if any
}

func readNDJSON(ctx context.Context, path string, schema *arrow.Schema, fn func(Batch) error) error {
	f, err := openText(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	// A byte-order mark is how some tools start UTF-8 text; it is not data.
	if bom, _ := r.Peek(3); string(bom) == "\ufeff" {
		_, _ = r.Discard(3)
	}
	return castInOrder(ctx, func(ctx context.Context, send func(ndjsonBlock) bool) error {
		return cutBlocks(ctx, r, send)
	}, func(ctx context.Context, b ndjsonBlock) ([]Batch, error) {
		return castBlock(ctx, path, schema, b)
	}, fn)
}

// cutBlocks reads r as blocks of whole lines, handing each to send until
// it says stop. A line longer than maxLine ends a block where it passes
// that, which its worker refuses by line as the line reader does.
func cutBlocks(ctx context.Context, r *bufio.Reader, send func(ndjsonBlock) bool) error {
	line := int64(1)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		data := make([]byte, ndjsonBlockBytes, ndjsonBlockBytes+64<<10)
		n := 0
		var err error
		for n < len(data) && err == nil {
			var m int
			m, err = r.Read(data[n:])
			n += m
		}
		data = data[:n]
		if err == nil {
			// Finish the block's last line.
			for int64(len(data)) <= ndjsonBlockBytes+maxLine {
				rest, rerr := r.ReadSlice('\n')
				data = append(data, rest...)
				if !errors.Is(rerr, bufio.ErrBufferFull) {
					err = rerr
					break
				}
			}
		}
		end := err != nil
		if err == io.EOF {
			err = nil
		}
		if len(data) == 0 && err == nil {
			return nil
		}
		b := ndjsonBlock{data: data, first: line, err: err}
		line += int64(bytes.Count(data, []byte{'\n'}))
		if !send(b) {
			return ctx.Err()
		}
		if end {
			return nil
		}
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// castBlock casts a block's rows as the line reader does, its lines
// numbered from the block's first.
func castBlock(ctx context.Context, path string, schema *arrow.Schema, b ndjsonBlock) ([]Batch, error) {
	var in io.Reader = bytes.NewReader(b.data)
	if b.err != nil {
		// The read error the line reader would meet after these lines.
		in = io.MultiReader(in, errReader{b.err})
	}
	src, _ := newJSONRows(in, schema)
	src.(*jsonRows).line = b.first - 1
	var batches []Batch
	err := readRows(ctx, path, src, schema, func(batch Batch) error {
		batch.Rec.Retain()
		batches = append(batches, batch)
		return nil
	})
	return batches, err
}
