package source

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/extensions"
	"github.com/google/uuid"
)

// jsonObject is a JSON object's members in the order written: a map
// column's entries are written in that order, so that the same input
// stages the same file.
type jsonObject []jsonMember

type jsonMember struct {
	Key   string
	Value any
}

// decodeNested reads a JSON object or array (an NDJSON value, or a CSV
// field of a struct, list or map column) into nil, bool, json.Number,
// string (jsonEmpty for ""), []any and jsonObject, refusing a key given
// twice in an object (encoding/json would keep the last).
func decodeNested(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := nestedValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("malformed JSON: more than one value")
	}
	return v, nil
}

func nestedValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("malformed JSON: %v", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			list := []any{}
			for dec.More() {
				v, err := nestedValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			return list, err
		}
		obj := jsonObject{}
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, fmt.Errorf("malformed JSON: %v", err)
			}
			key := k.(string)
			if seen[key] {
				return nil, fmt.Errorf("key %q is given twice", key)
			}
			seen[key] = true
			v, err := nestedValue(dec)
			if err != nil {
				return nil, err
			}
			obj = append(obj, jsonMember{key, v})
		}
		_, err := dec.Token()
		return obj, err
	case string:
		if t == "" {
			return jsonEmpty{}, nil
		}
	}
	return tok, nil
}

// appendNested casts a raw value to a struct, list or map column: a JSON
// object or array as NDJSON holds it, or its JSON text (a CSV field). It
// reports false for a builder of another type.
func appendNested(b array.Builder, f arrow.Field, raw any) (bool, error) {
	switch b.(type) {
	case *array.StructBuilder, *array.ListBuilder, *array.LargeListBuilder, *array.MapBuilder:
	default:
		return false, nil
	}
	if text, ok := raw.(string); ok {
		v, err := decodeNested([]byte(text))
		if err != nil {
			return true, fmt.Errorf("value %s is not JSON of a %s: %v", quote(raw), f.Type, err)
		}
		if loneSurrogate([]byte(text)) {
			return true, errors.New("value holds a \\u escape that is not a character (a lone surrogate)")
		}
		if v == nil { // a CSV field of JSON's null
			return true, appendValue(b, f, nil)
		}
		raw = v
	}
	return true, appendDecoded(b, f, raw)
}

func appendDecoded(b array.Builder, f arrow.Field, raw any) error {
	wrong := func(want string) error { return fmt.Errorf("value %s is not %s", quote(raw), want) }
	switch b := b.(type) {
	case *array.StructBuilder:
		obj, ok := raw.(jsonObject)
		if !ok {
			return wrong("an object: a struct is written {\"field\": value, ...}")
		}
		st := f.Type.(*arrow.StructType)
		vals := make([]any, st.NumFields())
		for _, m := range obj {
			i, ok := st.FieldIdx(m.Key)
			if !ok {
				return fmt.Errorf("field %s is not in %s", m.Key, f.Type)
			}
			vals[i] = m.Value
		}
		b.Append(true)
		for i, child := range st.Fields() {
			if err := appendValue(b.FieldBuilder(i), child, vals[i]); err != nil {
				return fmt.Errorf("field %s: %w", child.Name, err)
			}
		}
	case *array.ListBuilder, *array.LargeListBuilder:
		list, ok := raw.([]any)
		if !ok {
			return wrong("an array: a list is written [value, ...]")
		}
		lb := b.(array.ListLikeBuilder)
		lb.Append(true)
		elem := f.Type.(arrow.ListLikeType).ElemField()
		for i, v := range list {
			if err := appendValue(lb.ValueBuilder(), elem, v); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
	case *array.MapBuilder:
		obj, ok := raw.(jsonObject)
		if !ok {
			return wrong("an object: a map is written {\"key\": value, ...}")
		}
		mt := f.Type.(*arrow.MapType)
		b.Append(true)
		seen := map[string]string{}
		for _, m := range obj {
			k := sameKey(mt.KeyType(), m.Key)
			if first, dup := seen[k]; dup {
				return fmt.Errorf("keys %q and %q are the same %s; a map holds each key once", first, m.Key, mt.KeyType())
			}
			seen[k] = m.Key
			if err := appendValue(b.KeyBuilder(), mt.KeyField(), m.Key); err != nil {
				return fmt.Errorf("key %q: %w", m.Key, err)
			}
			if err := appendValue(b.ItemBuilder(), mt.ItemField(), m.Value); err != nil {
				return fmt.Errorf("key %q: %w", m.Key, err)
			}
		}
	}
	return nil
}

// appendBytes casts text to a binary, fixed or uuid column: base64 for
// the bytes of binary and fixed (standard alphabet, padded), the
// 8-4-4-4-12 hex form for a uuid. It reports false for another builder.
func appendBytes(b array.Builder, raw any, text string, isText bool) (bool, error) {
	switch b := b.(type) {
	case *array.BinaryBuilder:
		v, err := base64Value(raw, text, isText)
		if err != nil {
			return true, err
		}
		b.Append(v)
	case *array.FixedSizeBinaryBuilder:
		v, err := base64Value(raw, text, isText)
		if err != nil {
			return true, err
		}
		if w := b.Type().(*arrow.FixedSizeBinaryType).ByteWidth; len(v) != w {
			return true, fmt.Errorf("value %s holds %d bytes, the column holds exactly %d", quote(raw), len(v), w)
		}
		b.Append(v)
	case *extensions.UUIDBuilder:
		u, err := uuid.Parse(text)
		if !isText || err != nil || len(text) != 36 {
			return true, fmt.Errorf("value %s is not a uuid (8-4-4-4-12 hex digits, as f79c3e09-677c-4bbd-a479-3f349cb785e7)", quote(raw))
		}
		b.Append(u)
	default:
		return false, nil
	}
	return true, nil
}

func base64Value(raw any, text string, isText bool) ([]byte, error) {
	v, err := base64.StdEncoding.Strict().DecodeString(text)
	if !isText || err != nil {
		return nil, fmt.Errorf("value %s is not base64 (the standard alphabet, padded with =)", quote(raw))
	}
	return v, nil
}

// parseTime reads a time of day, HH:MM:SS with up to six fractional
// digits; a finer value is refused rather than truncated.
func parseTime(text string) (arrow.Time64, error) {
	bad := fmt.Errorf("value %q is not a time of day (HH:MM:SS, or HH:MM:SS.ffffff)", text)
	if len(text) < 8 || len(text) > 8 && text[8] != '.' {
		return 0, bad
	}
	t, err := time.Parse("15:04:05.999999999", text)
	if err != nil {
		return 0, bad
	}
	if frac := text[min(len(text), 9):]; len(frac) > 6 && strings.Trim(frac[6:], "0") != "" {
		return 0, fmt.Errorf("value %q is finer than a microsecond; it would be truncated", text)
	}
	d := time.Duration(t.Hour())*time.Hour + time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second + time.Duration(t.Nanosecond())
	return arrow.Time64(d / time.Microsecond), nil
}

// sameKey is a map key's text as one value of its type: 01 and 1 are one
// long, 1.0 and 1.00 one decimal, true and 1 one boolean, a uuid in either
// case one uuid. Text that does not parse is itself (the
// cast refuses it).
func sameKey(t arrow.DataType, text string) string {
	switch t := t.(type) {
	case *arrow.Int32Type, *arrow.Int64Type:
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return strconv.FormatInt(n, 10)
		}
	case *arrow.Decimal128Type:
		if n, err := parseDecimal(text, t.Precision, t.Scale); err == nil {
			return n.BigInt().String()
		}
	case *arrow.TimestampType:
		if v, err := parseTimestamp(text, t); err == nil {
			return strconv.FormatInt(int64(v), 10)
		}
	case *arrow.Float32Type:
		if v, err := strconv.ParseFloat(text, 32); err == nil {
			return strconv.FormatFloat(v, 'g', -1, 32)
		}
	case *arrow.Float64Type:
		if v, err := strconv.ParseFloat(text, 64); err == nil {
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
	case *arrow.BooleanType:
		if v, err := strconv.ParseBool(text); err == nil {
			return strconv.FormatBool(v)
		}
	case *arrow.Time64Type:
		if v, err := parseTime(text); err == nil {
			return strconv.FormatInt(int64(v), 10)
		}
	case *extensions.UUIDType:
		if u, err := uuid.Parse(text); err == nil {
			return u.String()
		}
	}
	return text
}
