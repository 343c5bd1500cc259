package source

import (
	"bytes"
	"io"
	"path/filepath"

	icebergio "github.com/apache/iceberg-go/io"

	"github.com/lakeswap/lakeswap/parquetio"
)

// sampleBytes is how much of a text input is read ahead to estimate its
// bytes a line.
const sampleBytes = 1 << 20

// bytesPerLine estimates how many bytes of a file (as stored, compressed
// or not) each of its lines or rows takes, so that a batch's last line
// says how far through the file the read is: from the file's first MiB
// for text, from its footer's row count for Parquet. 0 means unknown.
func bytesPerLine(path string, size int64) float64 {
	if size <= 0 {
		return 0
	}
	format, err := InputFormat(path)
	if err != nil {
		return 0
	}
	if format == "parquet" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return 0
		}
		n, err := parquetio.NumRows(icebergio.LocalFS{}, abs)
		if err != nil || n == 0 {
			return 0
		}
		return float64(size) / float64(n)
	}
	rc, err := openText(path) // decompressed, where it is compressed
	if err != nil {
		return 0
	}
	defer rc.Close()
	raw, _ := io.ReadAll(io.LimitReader(rc, sampleBytes))
	lines := bytes.Count(raw, []byte("\n"))
	if lines == 0 {
		return 0
	}
	perLine := float64(len(raw)) / float64(lines)
	if compression(path) != "" {
		// How far a compressed file is read is not known from its lines:
		// text compresses about 5 to 1, which the display assumes until
		// the file ends.
		perLine /= 5
	}
	return perLine
}
