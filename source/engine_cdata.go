//go:build !noduckdb

package source

/*
#include <stdint.h>
#include <stdlib.h>

// The Arrow C data interface (https://arrow.apache.org/docs/format/CDataInterface.html).
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};

struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};
#endif

// Two functions of DuckDB's C API (duckdb.h), linked in by its bindings.
// Every DuckDB handle is a pointer to an opaque struct.
void *duckdb_to_arrow_schema(void *options, void **types, const char **names, uint64_t count, struct ArrowSchema *out);
void *duckdb_data_chunk_to_arrow(void *options, void *chunk, struct ArrowArray *out);
*/
import "C"

import (
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/cdata"
	bindings "github.com/duckdb/duckdb-go-bindings"
)

// The bindings convert DuckDB's results to Arrow only in a build with their
// duckdb_arrow tag, which `go install` cannot set; these two calls are
// theirs, made here so that every build of lakeswap has its engine.

// arrowSchema is the Arrow schema of a result's columns.
func arrowSchema(opts bindings.ArrowOptions, types []bindings.LogicalType, names []string) (*arrow.Schema, error) {
	n := len(names)
	// Both lists are C memory: cgo does not let C keep Go pointers.
	cTypes := unsafe.Slice((*unsafe.Pointer)(C.calloc(C.size_t(max(n, 1)), C.size_t(unsafe.Sizeof(uintptr(0))))), max(n, 1))
	defer C.free(unsafe.Pointer(&cTypes[0]))
	cNames := unsafe.Slice((**C.char)(C.calloc(C.size_t(max(n, 1)), C.size_t(unsafe.Sizeof(uintptr(0))))), max(n, 1))
	defer func() {
		for i := range n {
			C.free(unsafe.Pointer(cNames[i]))
		}
		C.free(unsafe.Pointer(&cNames[0]))
	}()
	for i := range n {
		cTypes[i] = types[i].Ptr
		cNames[i] = C.CString(names[i])
	}
	out := (*C.struct_ArrowSchema)(C.calloc(1, C.sizeof_struct_ArrowSchema))
	defer func() {
		cdata.ReleaseCArrowSchema((*cdata.CArrowSchema)(unsafe.Pointer(out)))
		C.free(unsafe.Pointer(out))
	}()
	ed := C.duckdb_to_arrow_schema(opts.Ptr, &cTypes[0], &cNames[0], C.uint64_t(n), out)
	if err := errorData(bindings.ErrorData{Ptr: ed}); err != nil {
		return nil, err
	}
	return cdata.ImportCArrowSchema((*cdata.CArrowSchema)(unsafe.Pointer(out)))
}

// arrowBatch is a result's chunk as an Arrow batch of the given schema; its
// strings may point into the chunk.
func arrowBatch(opts bindings.ArrowOptions, schema *arrow.Schema, chunk bindings.DataChunk) (arrow.RecordBatch, error) {
	out := (*C.struct_ArrowArray)(C.calloc(1, C.sizeof_struct_ArrowArray))
	defer func() {
		cdata.ReleaseCArrowArray((*cdata.CArrowArray)(unsafe.Pointer(out)))
		C.free(unsafe.Pointer(out))
	}()
	ed := C.duckdb_data_chunk_to_arrow(opts.Ptr, chunk.Ptr, out)
	if err := errorData(bindings.ErrorData{Ptr: ed}); err != nil {
		return nil, err
	}
	return cdata.ImportCRecordBatchWithSchema((*cdata.CArrowArray)(unsafe.Pointer(out)), schema)
}
