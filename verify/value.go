package verify

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/google/uuid"

	"github.com/lakeswap/lakeswap/internal/words"
)

// FormatValue shows row i of a column as the table holds it, for a person
// comparing values: null as null, text in double quotes (so that an empty
// or spaced string shows), a decimal at its scale (19.10, not 19.1), a
// timestamp in ISO 8601 with its zone where the type has one (+00:00),
// bytes in base64, a uuid as 8-4-4-4-12, nested values as JSON.
func FormatValue(col arrow.Array, i int) string {
	if col.IsNull(i) {
		return "null"
	}
	switch a := col.(type) {
	case *array.String:
		return quote(a.Value(i))
	case *array.LargeString:
		return quote(a.Value(i))
	case *array.Binary:
		return base64.StdEncoding.EncodeToString(a.Value(i))
	case *array.LargeBinary:
		return base64.StdEncoding.EncodeToString(a.Value(i))
	case array.ExtensionArray:
		if st, ok := a.Storage().(*array.FixedSizeBinary); ok && a.ExtensionType().ExtensionName() == "arrow.uuid" {
			if u, err := uuid.FromBytes(st.Value(i)); err == nil {
				return u.String()
			}
		}
		return FormatValue(a.Storage(), i)
	case *array.FixedSizeBinary:
		return base64.StdEncoding.EncodeToString(a.Value(i))
	case *array.Decimal128:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)
	case *array.Date32:
		return a.Value(i).ToTime().Format(time.DateOnly)
	case *array.Time64:
		t := a.DataType().(*arrow.Time64Type)
		return a.Value(i).ToTime(t.Unit).Format("15:04:05.999999999")
	case *array.Timestamp:
		t := a.DataType().(*arrow.TimestampType)
		ts := a.Value(i).ToTime(t.Unit).UTC()
		if t.TimeZone == "" {
			return ts.Format("2006-01-02T15:04:05.999999999")
		}
		return ts.Format("2006-01-02T15:04:05.999999999-07:00")
	case *array.Float32:
		return strconv.FormatFloat(float64(a.Value(i)), 'g', -1, 32)
	case *array.Float64:
		return strconv.FormatFloat(a.Value(i), 'g', -1, 64)
	case *array.Struct, *array.List, *array.LargeList, *array.Map:
		b, err := json.Marshal(col.GetOneForMarshal(i))
		if err != nil {
			return col.ValueStr(i)
		}
		return string(b)
	}
	return col.ValueStr(i)
}

func quote(s string) string {
	if !utf8.ValidString(s) {
		// Bytes that are not UTF-8 are shown as they are (\xff), never
		// as the one replacement character two different values share.
		return strconv.Quote(s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return strconv.Quote(s)
	}
	// JSON escapes control characters; a format character (a bidi
	// override) would still reorder the line a person reads.
	return words.Printable(string(b))
}

// maxShown is the most bytes of a value a comparison shows.
const maxShown = 200

// shorten cuts a value shown longer than maxShown, saying how long it is:
// a text or blob column would make a plan's every line that long.
func shorten(v string) string {
	if len(v) <= maxShown {
		return v
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", v[:cut], len(v))
}
