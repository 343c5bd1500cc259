package contract

import (
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// PropFreezeAfter freezes a table's partitions some time after the period
// they belong to ends: P1M+7D freezes a month's partitions (its days, or
// the month itself) seven days after the month ends. A run that would
// change a frozen partition is refused unless it says, with a reason,
// that it restates it.
const PropFreezeAfter = "lakeswap.freeze-after"

// Freeze is a parsed lakeswap.freeze-after: periods of N units (D, M or
// Y), each frozen Grace after it ends.
type Freeze struct {
	N     int
	Unit  byte // 'D', 'M' or 'Y'
	Grace time.Duration
	Text  string
}

var freezeForm = regexp.MustCompile(`^P([1-9][0-9]{0,3})([DMY])(?:\+([0-9]{1,4})([DH]))?$`)

// ParseFreeze reads P1M+7D, P1D, P1Y+30D or P1D+36H.
func ParseFreeze(s string) (*Freeze, error) {
	m := freezeForm.FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf("freeze-after %q: write P<n><D|M|Y>[+<n><D|H>], for example P1M+7D (a month's partitions freeze 7 days after it ends)", s)
	}
	n, _ := strconv.Atoi(m[1])
	f := &Freeze{N: n, Unit: m[2][0], Text: s}
	if m[3] != "" {
		g, _ := strconv.Atoi(m[3])
		f.Grace = time.Duration(g) * time.Hour
		if m[4] == "D" {
			f.Grace *= 24
		}
	}
	return f, nil
}

// FrozenAt is when a partition freezes: its period (the N-day, N-month
// or N-year span, counted from the epoch, holding the last instant of the
// partition's date or time field) ends, plus the grace. A table of several
// fields (day(ts), region) freezes by its first field that names a
// period. ok is false where the value names none (a null day).
func (c *Contract) FrozenAt(value string) (time.Time, bool) {
	i, has := c.PeriodField()
	if c.Freeze == nil || !has {
		return time.Time{}, false
	}
	parts, ok := c.Partition.Split(value)
	if !ok {
		return time.Time{}, false
	}
	f := c.Partition.Fields[i]
	ends, ok := f.Ends(c.Arrow.Field(f.Column).Type, parts[i])
	if !ok {
		return time.Time{}, false
	}
	last := ends.Add(-time.Nanosecond).UTC()
	var end time.Time
	switch c.Freeze.Unit {
	case 'D':
		days := int(last.Unix() / 86400)
		end = time.Unix(int64(days-days%c.Freeze.N+c.Freeze.N)*86400, 0).UTC()
	case 'M':
		months := (last.Year()-1970)*12 + int(last.Month()) - 1
		months = months - months%c.Freeze.N + c.Freeze.N
		end = time.Date(1970+months/12, time.Month(months%12+1), 1, 0, 0, 0, 0, time.UTC)
	default:
		years := last.Year() - 1970
		years = years - years%c.Freeze.N + c.Freeze.N
		end = time.Date(1970+years, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return end.Add(c.Freeze.Grace), true
}

// PeriodField is the index of the first partition field that names a
// period (a date, or a year, month, day or hour of a date or time): what a
// freeze judges a partition by.
func (c *Contract) PeriodField() (int, bool) {
	for i, f := range c.Partition.Fields {
		if f.namesPeriod(c.Arrow.Field(f.Column).Type) {
			return i, true
		}
	}
	return 0, false
}
