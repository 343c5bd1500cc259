package source

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzCheckCSVLines: reading whole lines at a time finds what reading
// byte by byte finds: whether a file is plain, why not and where, and the
// lines its records start on.
func FuzzCheckCSVLines(f *testing.F) {
	for _, s := range []string{
		"a,b,c\n1,2,3\n4,5,6\n", "a,b\n\n1,2\n\n\n3,4", "a,b\r\n1,2\r\n", "a,b\n1,2\r\n3,4\n",
		"\n a,b\n1,2\n", "a,b\n1,2,3\n", "a,b\n\"x\ny\",2\n3,4\n", "a,b\n1\"2,3\n", "a,b\n\"1\"x,2\n",
		"\ufeffa,b\n1,2\n", "a,b\n1,2\r3,4\n", "a,b\n\"1\r\",2\n", "a;b\n1;2\n", "a,b\n\"1\"\"2\",3\n",
		"a,b\n1,2", "a,b\n\"1,2", "a,b\n1,2\r",
	} {
		f.Add([]byte(s), byte(','))
	}
	f.Add([]byte("a;b\n1;2\n3,4;5\n"), byte(';'))
	f.Fuzz(func(t *testing.T, data []byte, delim byte) {
		if delim == '"' || delim == '\r' || delim == '\n' {
			return
		}
		fast, slow := checkBothWays(t, data, dialect{delim, '"'})
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: by lines %+v, byte by byte %+v", data, *fast, *slow)
		}
	})
}

// TestCheckCSVLinesAcrossReads: lines that cross the 1 MiB a read takes,
// and records longer than the plain form allows, are found both ways.
func TestCheckCSVLinesAcrossReads(t *testing.T) {
	long := make([]byte, 0, 3<<20)
	long = append(long, "a,b\n"...)
	for len(long) < 3<<20 {
		long = append(long, "2026-01-01,12345\n"...)
		if len(long)%7 == 0 {
			long = append(long, '\n')
		}
	}
	huge := append([]byte("a,b\n1,"), make([]byte, 1<<20)...)
	for i := 6; i < len(huge); i++ {
		huge[i] = 'x'
	}
	huge = append(huge, "\n2,3\n"...)
	for name, data := range map[string][]byte{"many lines": long, "a long record": huge} {
		fast, slow := checkBothWays(t, data, plainDialect)
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s: by lines %+v, byte by byte %+v", name, fast.why, slow.why)
		}
		if name == "a long record" && (slow.plain || slow.why != "a record longer than 1 MiB") {
			t.Errorf("%s: plain %v (%s)", name, slow.plain, slow.why)
		}
	}
}

// checkBothWays checks data's shape by lines and byte by byte.
func checkBothWays(t *testing.T, data []byte, d dialect) (fast, slow *csvShape) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	slow, err := checkCSVWith(path, d, false)
	if err != nil {
		t.Fatal(err)
	}
	if fast, err = checkCSVWith(path, d, true); err != nil {
		t.Fatal(err)
	}
	return fast, slow
}

// BenchmarkCheckCSV checks the shape of 1M lines of orders, byte by byte
// and by lines.
func BenchmarkCheckCSV(b *testing.B) {
	data := []byte("order_date,channel,order_count,amount_cents\n")
	for i := range 1 << 20 {
		data = append(data, []byte("2026-01-07,c"+string(rune('0'+i%7))+",1,39298\n")...)
	}
	path := filepath.Join(b.TempDir(), "orders.csv")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	for _, fast := range []bool{false, true} {
		b.Run(map[bool]string{false: "bytes", true: "lines"}[fast], func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := checkCSVWith(path, plainDialect, fast); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
