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
const ndjsonBlockBytes = 4 << 20

// ndjsonBlock is whole lines of a file, the first of them line first.
type ndjsonBlock struct {
	data  []byte
	first int64
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
		n, err := io.ReadFull(r, data)
		data = data[:n]
		if err == nil {
			// Finish the block's last line.
			for len(data) <= ndjsonBlockBytes+maxLine {
				rest, rerr := r.ReadSlice('\n')
				data = append(data, rest...)
				if rerr == nil || !errors.Is(rerr, bufio.ErrBufferFull) {
					if rerr != nil && !errors.Is(rerr, io.EOF) {
						return rerr
					}
					break
				}
			}
		} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return err
		}
		if len(data) == 0 {
			return nil
		}
		b := ndjsonBlock{data: data, first: line}
		line += int64(bytes.Count(data, []byte{'\n'}))
		if !send(b) {
			return ctx.Err()
		}
	}
}

// castBlock casts a block's rows as the line reader does, its lines
// numbered from the block's first.
func castBlock(ctx context.Context, path string, schema *arrow.Schema, b ndjsonBlock) ([]Batch, error) {
	src, _ := newJSONRows(bytes.NewReader(b.data), schema)
	src.(*jsonRows).line = b.first - 1
	var batches []Batch
	err := readRows(ctx, path, src, schema, func(batch Batch) error {
		batch.Rec.Retain()
		batches = append(batches, batch)
		return nil
	})
	return batches, err
}
