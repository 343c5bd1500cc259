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

// TestPrintable: control characters a person typed print as escapes, on
// one line; other text, any script, as given.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"closed; o108 goes to February": "closed; o108 goes to February",
		"évé 👀":                         "évé 👀",
		"a\nrun fake: forged":           `a\nrun fake: forged`,
		"x\x1b[31mRED\r\t":              `x\x1b[31mRED\r\t`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}
