//go:build !noduckdb

package source

import (
	"unsafe"

	bindings "github.com/duckdb/duckdb-go-bindings"
)

// texts is a text column of one of the engine's result chunks, read where
// the engine holds it: a value lives as long as the chunk. A chunk fetched
// from a result is flat (duckdb_fetch_chunk), so row r is entry r.
type texts struct {
	data  []stringT
	valid []uint64 // nil when every value is valid
}

// stringT is DuckDB's string_t: a 4-byte length, then up to 12 bytes held
// inline, or else a 4-byte prefix and a pointer to the bytes.
type stringT [16]byte

// chunkTexts is column col of a chunk of n rows whose column is VARCHAR.
func chunkTexts(chunk bindings.DataChunk, col, n int) texts {
	vec := bindings.DataChunkGetVector(chunk, bindings.IdxT(col))
	t := texts{data: unsafe.Slice((*stringT)(bindings.VectorGetData(vec)), n)}
	if v := bindings.VectorGetValidity(vec); v != nil {
		t.valid = unsafe.Slice((*uint64)(v), (n+63)/64)
	}
	return t
}

func (t texts) Len() int { return len(t.data) }

// Value is row r's text; a null (an unquoted empty field) is "".
func (t texts) Value(r int) string {
	if t.valid != nil && t.valid[r>>6]&(1<<(r&63)) == 0 {
		return ""
	}
	s := &t.data[r]
	n := *(*uint32)(unsafe.Pointer(&s[0]))
	if n == 0 {
		return ""
	}
	if n <= 12 {
		return unsafe.String(&s[4], n)
	}
	return unsafe.String(*(**byte)(unsafe.Pointer(&s[8])), n)
}
