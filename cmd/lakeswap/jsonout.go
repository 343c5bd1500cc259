package main

import (
	"encoding/json"
	"reflect"
	"strings"
)

// nonNil is v with every nil list and map that JSON would print as null
// made empty (those tagged omitempty are left out as they are). It fills a
// copy of v; lists and maps it shares with v gain only empty members.
func nonNil(v any) any {
	if v == nil {
		return nil
	}
	rv := reflect.ValueOf(v)
	c := reflect.New(rv.Type()).Elem()
	c.Set(rv)
	fill(c, map[uintptr]bool{})
	return c.Interface()
}

func fill(v reflect.Value, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		fill(v.Elem(), seen)
	case reflect.Interface:
		if v.IsNil() || !v.CanSet() {
			return
		}
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		fill(c, seen)
		v.Set(c)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f, fv := t.Field(i), v.Field(i)
			tag := f.Tag.Get("json")
			if !f.IsExported() || tag == "-" || !fv.CanSet() {
				continue
			}
			if !strings.Contains(tag, ",omitempty") {
				empty(fv)
			}
			fill(fv, seen)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), seen)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			c := reflect.New(v.Type().Elem()).Elem()
			c.Set(v.MapIndex(k))
			empty(c)
			fill(c, seen)
			v.SetMapIndex(k, c)
		}
	}
}

// empty makes a nil list or map empty.
func empty(v reflect.Value) {
	switch {
	case v.Kind() == reflect.Slice && v.IsNil():
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	case v.Kind() == reflect.Map && v.IsNil():
		v.Set(reflect.MakeMap(v.Type()))
	}
}

// topLevel is what a failed command's result says at its top, where a
// script looks first: its run id, snapshot and status; status is kind
// when the result has none.
func topLevel(result any, kind string) (runID string, snapshotID int64, status string) {
	var top struct {
		RunID      string `json:"run_id"`
		SnapshotID string `json:"snapshot_id"`
		Status     string `json:"status"`
	}
	if raw, err := json.Marshal(result); err == nil {
		_ = json.Unmarshal(raw, &top)
	}
	if top.Status == "" {
		top.Status = kind
	}
	var id int64
	_ = json.Unmarshal([]byte(top.SnapshotID), &id)
	return top.RunID, id, top.Status
}

// envJSONLog, for the tests' check of every -o json output against
// docs/json: a file each output is appended to, as one JSON line
// {"command": ..., "output": ...}. Only the test binary, which the process
// tests run as lakeswap, reads it (barrier_test.go).
const envJSONLog = "LAKESWAP_TEST_JSON_LOG"
