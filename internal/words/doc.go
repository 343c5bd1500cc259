// Package words writes counts as a reader says them (1 file, 2 files),
// and text a person gave as it can be printed.
package words
