package words

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Count(0, "file"), "0 files"},
		{Count(1, "file"), "1 file"},
		{Count(int64(2), "partition"), "2 partitions"},
		{Count(1, "entry", "entries"), "1 entry"},
		{Count(3, "entry", "entries"), "3 entries"},
		{Count(-1, "row"), "-1 rows"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
